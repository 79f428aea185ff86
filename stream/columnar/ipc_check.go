package columnar

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/streamfit/streamfit/stream"
)

// Checking Arrow IPC metadata before arrow-go decodes it. arrow-go sizes
// slices by the vector lengths a flatbuffer declares (a schema's fields, a
// field's children and metadata) before it reads them, so one damaged
// length in a schema made it ask for tens of gigabytes, and the runtime
// ends a process that runs out of memory: no recover helps. A panic on a
// bad offset, by contrast, is recovered (guard). The checks below walk the
// tables arrow-go reads and refuse any vector that does not fit its buffer.

// Field numbers of the tables checked (format/Schema.fbs, Message.fbs,
// File.fbs).
const (
	fbSchemaFields         = 1
	fbSchemaMetadata       = 2
	fbSchemaFeatures       = 3
	fbFieldName            = 0
	fbFieldTypeType        = 2
	fbFieldType            = 3
	fbFieldDictionary      = 4
	fbFieldChildren        = 5
	fbFieldMetadata        = 6
	fbKeyValueKey          = 0
	fbKeyValueValue        = 1
	fbDictIndexType        = 1
	fbTimestampTimezone    = 1
	fbUnionTypeIDs         = 1
	fbTypeTimestamp        = 10
	fbTypeUnion            = 14
	fbMessageMetadata      = 4
	fbHeaderSchema         = 1
	fbHeaderDictionary     = 2
	fbDictionaryData       = 1
	fbRecordBatchNodes     = 1
	fbRecordBatchBuffers   = 2
	fbRecordBatchVariadic  = 4
	fbFooterSchema         = 1
	fbFooterDictionaries   = 2
	fbFooterMetadata       = 4
	fbFieldNodeSize        = 16
	fbBufferSize           = 16
	fbMaxDepth             = 64
	fbMaxVisits            = 1 << 20
	errMalformedIPCMessage = "malformed Arrow IPC metadata: a length or offset points outside its message"
)

// checker walks flatbuffer tables, counting the tables it visits so that
// tables shared by many parents (a damaged buffer can make a small one
// describe a huge tree) do not make the walk itself long.
type checker struct {
	flatReader
	visits int
}

// vector returns the first element and the length of the vector the
// offset at field position f points to, checking that n elements of elem
// bytes fit in the buffer (0, 0 for an absent field).
func (c *checker) vector(f, elem int) (int, int) {
	if f == 0 {
		return 0, 0
	}
	v := c.ref(f)
	n := c.u32(v)
	if c.bad || n > (len(c.b)-v-4)/elem {
		c.bad = true
		return 0, 0
	}
	return v + 4, n
}

// table checks the table at t is inside the buffer and counts it.
func (c *checker) table(t int) bool {
	c.visits++
	if c.visits > fbMaxVisits {
		c.bad = true
	}
	c.field(t, 0) // reads the vtable: bad when outside the buffer
	return !c.bad
}

// tables calls fn on each table of the vector at field position f.
func (c *checker) tables(f int, fn func(t int)) {
	at, n := c.vector(f, 4)
	for i := 0; i < n && !c.bad; i++ {
		fn(c.ref(at + 4*i))
	}
}

func (c *checker) str(f int) { c.vector(f, 1) }

func (c *checker) keyValues(f int) {
	c.tables(f, func(t int) {
		if c.table(t) {
			c.str(c.field(t, fbKeyValueKey))
			c.str(c.field(t, fbKeyValueValue))
		}
	})
}

func (c *checker) schema(t int) {
	if !c.table(t) {
		return
	}
	c.tables(c.field(t, fbSchemaFields), func(f int) { c.arrowField(f, 0) })
	c.keyValues(c.field(t, fbSchemaMetadata))
	c.vector(c.field(t, fbSchemaFeatures), 8)
}

func (c *checker) arrowField(t, depth int) {
	if depth > fbMaxDepth {
		c.bad = true
	}
	if !c.table(t) {
		return
	}
	c.str(c.field(t, fbFieldName))
	if typ := c.field(t, fbFieldType); typ != 0 {
		tt := 0
		if p := c.field(t, fbFieldTypeType); p != 0 {
			tt = c.u8(p)
		}
		if ty := c.ref(typ); c.table(ty) {
			switch tt {
			case fbTypeTimestamp:
				c.str(c.field(ty, fbTimestampTimezone))
			case fbTypeUnion:
				c.vector(c.field(ty, fbUnionTypeIDs), 4)
			}
		}
	}
	if d := c.field(t, fbFieldDictionary); d != 0 {
		if dt := c.ref(d); c.table(dt) {
			if it := c.field(dt, fbDictIndexType); it != 0 {
				c.table(c.ref(it))
			}
		}
	}
	c.tables(c.field(t, fbFieldChildren), func(f int) { c.arrowField(f, depth+1) })
	c.keyValues(c.field(t, fbFieldMetadata))
}

func (c *checker) recordBatch(t int) {
	if !c.table(t) {
		return
	}
	c.vector(c.field(t, fbRecordBatchNodes), fbFieldNodeSize)
	c.vector(c.field(t, fbRecordBatchBuffers), fbBufferSize)
	c.vector(c.field(t, fbRecordBatchVariadic), 8)
}

// checkMessage checks the flatbuffer of an IPC message header.
func checkMessage(meta []byte) error {
	c := &checker{flatReader: flatReader{b: meta}}
	msg := c.ref(0)
	if c.table(msg) {
		c.keyValues(c.field(msg, fbMessageMetadata))
		kind := 0
		if p := c.field(msg, fbMessageHeaderType); p != 0 {
			kind = c.u8(p)
		}
		if h := c.field(msg, fbMessageHeader); h != 0 {
			ht := c.ref(h)
			switch kind {
			case fbHeaderSchema:
				c.schema(ht)
			case fbHeaderRecordBatch:
				c.recordBatch(ht)
			case fbHeaderDictionary:
				if c.table(ht) {
					if d := c.field(ht, fbDictionaryData); d != 0 {
						c.recordBatch(c.ref(d))
					}
				}
			}
		}
	}
	if c.bad {
		return errors.New(errMalformedIPCMessage)
	}
	return nil
}

// checkFooter checks the flatbuffer of an IPC file's footer.
func checkFooter(buf []byte) error {
	c := &checker{flatReader: flatReader{b: buf}}
	footer := c.ref(0)
	if c.table(footer) {
		if s := c.field(footer, fbFooterSchema); s != 0 {
			c.schema(c.ref(s))
		}
		c.vector(c.field(footer, fbFooterDictionaries), ipcBlockSize)
		c.vector(c.field(footer, fbFooterRecordBatches), ipcBlockSize)
		c.keyValues(c.field(footer, fbFooterMetadata))
	}
	if c.bad {
		return errors.New("malformed Arrow IPC footer: a length or offset points outside it")
	}
	return nil
}

// ipcFooter reads the footer flatbuffer of the Arrow IPC file f of size
// bytes.
func ipcFooter(f io.ReaderAt, size int64) ([]byte, error) {
	if size < int64(len(magicArrow))+ipcFooterTail {
		return nil, fmt.Errorf("file too small for an Arrow IPC footer")
	}
	tail := make([]byte, ipcFooterTail)
	if _, err := f.ReadAt(tail, size-ipcFooterTail); err != nil {
		return nil, err
	}
	flen := int64(binary.LittleEndian.Uint32(tail))
	if string(tail[4:]) != string(magicArrow) || flen <= 0 || flen > size-ipcFooterTail-int64(len(magicArrow)) {
		return nil, fmt.Errorf("bad Arrow IPC footer length %d", flen)
	}
	buf := make([]byte, flen)
	if _, err := f.ReadAt(buf, size-ipcFooterTail-flen); err != nil {
		return nil, err
	}
	return buf, nil
}

// checkIPCFile checks the footer of the Arrow IPC file f of size bytes.
func checkIPCFile(f io.ReaderAt, size int64) error {
	buf, err := ipcFooter(f, size)
	if err != nil {
		return err
	}
	return checkFooter(buf)
}

// checkedMessages passes an IPC stream through, message by message, after
// checking each message's header (checkMessage); a body is passed on as it
// is. A framing it cannot follow is left for arrow-go to report.
type checkedMessages struct {
	r    io.Reader
	buf  []byte // the framing and header of the current message, not yet read
	body int64  // bytes of the current message's body not yet read
	err  error
	// The compressed buffers of the current body whose decompressed size
	// (their first 8 bytes) is yet to be checked, by offset; pos is the
	// body's bytes read, acc/got the size being read.
	pending []ipcBuffer
	pos     int64
	acc     [8]byte
	got     int
}

func (s *checkedMessages) Read(p []byte) (int, error) {
	for len(s.buf) == 0 && s.body == 0 && s.err == nil {
		if s.err = s.next(); s.err != nil {
			s.buf, s.body = nil, 0 // a refused message is not passed on
		}
	}
	switch {
	case len(s.buf) > 0:
		n := copy(p, s.buf)
		s.buf = s.buf[n:]
		return n, nil
	case s.body > 0:
		if int64(len(p)) > s.body {
			p = p[:s.body]
		}
		n, err := s.r.Read(p)
		s.body -= int64(n)
		if err == io.EOF && s.body > 0 {
			err = io.ErrUnexpectedEOF
		}
		if cerr := s.scan(p[:n]); cerr != nil {
			s.err, s.body = cerr, 0
			return 0, cerr
		}
		return n, err
	}
	return 0, s.err
}

// next reads the framing and header of the next message into buf, and
// sets body to its body's length.
func (s *checkedMessages) next() error {
	var word [4]byte
	if _, err := io.ReadFull(s.r, word[:]); err != nil {
		return err
	}
	s.buf = append(s.buf[:0], word[:]...)
	n := binary.LittleEndian.Uint32(word[:])
	if n == 0xffffffff {
		if _, err := io.ReadFull(s.r, word[:]); err != nil {
			return unexpected(err)
		}
		s.buf = append(s.buf, word[:]...)
		n = binary.LittleEndian.Uint32(word[:])
	}
	if n == 0 || int32(n) < 0 {
		return nil // the end of the stream, or a length arrow-go refuses
	}
	if n > maxIPCHeader {
		return fmt.Errorf("bad message header length %d", n)
	}
	at := len(s.buf)
	if _, err := io.CopyN(&appender{&s.buf}, s.r, int64(n)); err != nil {
		return unexpected(err)
	}
	meta := s.buf[at:]
	if err := checkMessage(meta); err != nil {
		return err
	}
	r := &flatReader{b: meta}
	if l := r.field(r.ref(0), fbMessageBodyLength); l != 0 {
		s.body = r.i64(l)
	}
	if r.bad || s.body < 0 {
		return errors.New(errMalformedIPCMessage)
	}
	s.pending = compressedBuffers(meta)
	slices.SortFunc(s.pending, func(a, b ipcBuffer) int { return cmp.Compare(a.offset, b.offset) })
	s.pos, s.got = 0, 0
	return nil
}

// scan looks at the body bytes b, which follow the s.pos read before, for
// the decompressed sizes of the pending buffers.
func (s *checkedMessages) scan(b []byte) error {
	start := s.pos
	s.pos += int64(len(b))
	for len(s.pending) > 0 {
		o := s.pending[0].offset + int64(s.got)
		if o >= s.pos {
			return nil
		}
		if o < start || s.pending[0].length < 8 {
			// Overlapping buffers, or one arrow-go refuses: not checked here.
			s.pending, s.got = s.pending[1:], 0
			continue
		}
		for ; s.got < 8 && o < s.pos; o++ {
			s.acc[s.got] = b[o-start]
			s.got++
		}
		if s.got < 8 {
			return nil
		}
		if err := checkDecompressedSize(int64(binary.LittleEndian.Uint64(s.acc[:])), s.pending[0].length); err != nil {
			return err
		}
		s.pending, s.got = s.pending[1:], 0
	}
	return nil
}

// unexpected is err met inside a message: its end comes too early.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// fbMessageBodyLength is the Message table's bodyLength field.
const fbMessageBodyLength = 3

// appender is an io.Writer appending to a byte slice.
type appender struct{ b *[]byte }

func (a *appender) Write(p []byte) (int, error) { *a.b = append(*a.b, p...); return len(p), nil }

// checkSchemaMessage checks an IPC schema message held whole in b (the
// Arrow schema a Parquet writer stores in its footer): its header, and a
// body that fits in b.
func checkSchemaMessage(b []byte) error {
	r := &flatReader{b: b}
	at := 0
	if r.u32(0) == 0xffffffff {
		at = 4
	}
	n := r.i32(at)
	if r.bad || n <= 0 || n > len(b)-at-4 {
		return errors.New(errMalformedIPCMessage)
	}
	meta := b[at+4 : at+4+n]
	if err := checkMessage(meta); err != nil {
		return err
	}
	m := &flatReader{b: meta}
	msg := m.ref(0)
	var body int64
	if l := m.field(msg, fbMessageBodyLength); l != 0 {
		body = m.i64(l)
	}
	kind := 0
	if p := m.field(msg, fbMessageHeaderType); p != 0 {
		kind = m.u8(p)
	}
	if m.bad || body < 0 || body > int64(len(b)-at-4-n) || kind != fbHeaderSchema {
		return errors.New(errMalformedIPCMessage)
	}
	return nil
}

// openIPCFile opens the Arrow IPC file f of size bytes after checking its
// footer.
func openIPCFile(f stream.File, size int64) (*ipc.FileReader, error) {
	if err := checkIPCFile(f, size); err != nil {
		return nil, err
	}
	return ipc.NewFileReader(f)
}

// Compressed Arrow IPC buffers start with their decompressed size, which
// arrow-go allocates before it decompresses: a damaged size asked for
// exabytes. A size is accepted up to what the codecs' formats can reach
// from the buffer's bytes (an LZ4 block expands at most about 255 times, a
// zstd block of 128 kB takes at least 4 bytes) with room to spare, and
// never beyond 4 GB; 64 MB is always accepted.
const (
	fbRecordBatchCompression = 3
	ipcMaxExpansion          = 1 << 16
	ipcMaxBuffer             = 4 << 30
	ipcFreeBuffer            = 64 << 20
)

// checkDecompressedSize refuses the decompressed size size of a compressed
// buffer of n bytes (its 8-byte prefix included) that it cannot have.
func checkDecompressedSize(size, n int64) error {
	if size == -1 || size >= 0 && (size <= ipcFreeBuffer || size <= min(n*ipcMaxExpansion, ipcMaxBuffer)) {
		return nil
	}
	return fmt.Errorf("a compressed buffer of %d bytes says it holds %d: the record batch is damaged", n, size)
}

// ipcBuffer is a buffer of a record batch's body.
type ipcBuffer struct{ offset, length int64 }

// compressedBuffers lists the buffers of a record batch (or of the record
// batch of a dictionary batch) whose message header meta declares its body
// compressed; nil when it is not, or meta does not read as a record batch.
func compressedBuffers(meta []byte) []ipcBuffer {
	r := &flatReader{b: meta}
	msg := r.ref(0)
	kind := 0
	if p := r.field(msg, fbMessageHeaderType); p != 0 {
		kind = r.u8(p)
	}
	h := r.field(msg, fbMessageHeader)
	if h == 0 || (kind != fbHeaderRecordBatch && kind != fbHeaderDictionary) {
		return nil
	}
	rb := r.ref(h)
	if kind == fbHeaderDictionary {
		d := r.field(rb, fbDictionaryData)
		if d == 0 {
			return nil
		}
		rb = r.ref(d)
	}
	if r.field(rb, fbRecordBatchCompression) == 0 {
		return nil
	}
	f := r.field(rb, fbRecordBatchBuffers)
	if f == 0 {
		return nil
	}
	v := r.ref(f)
	n := r.u32(v)
	if r.bad || n > (len(meta)-v-4)/fbBufferSize {
		return nil
	}
	bufs := make([]ipcBuffer, 0, n)
	for i := range n {
		at := v + 4 + i*fbBufferSize
		if b := (ipcBuffer{r.i64(at), r.i64(at + 8)}); b.length > 0 {
			bufs = append(bufs, b)
		}
	}
	if r.bad {
		return nil
	}
	return bufs
}

// checkCompressed checks the decompressed sizes of the compressed buffers
// of the record batch in block b of the IPC file f.
func checkCompressed(f io.ReaderAt, b ipcBlock) error {
	head := make([]byte, b.meta)
	if _, err := f.ReadAt(head, b.offset); err != nil {
		return err
	}
	at := 0
	if binary.LittleEndian.Uint32(head) == 0xffffffff {
		at = 4
	}
	n := int(int32(binary.LittleEndian.Uint32(head[at:])))
	if n <= 0 || n > len(head)-at-4 {
		return fmt.Errorf("bad message header length %d", n)
	}
	var word [8]byte
	for _, buf := range compressedBuffers(head[at+4 : at+4+n]) {
		if buf.offset < 0 || buf.length < 8 || buf.offset > b.body-buf.length {
			continue // arrow-go refuses a buffer outside the body
		}
		if _, err := f.ReadAt(word[:], b.offset+b.meta+buf.offset); err != nil {
			return err
		}
		if err := checkDecompressedSize(int64(binary.LittleEndian.Uint64(word[:])), buf.length); err != nil {
			return err
		}
	}
	return nil
}

// checkBlock checks the decompressed sizes of the buffers of record batch
// i of an IPC file f whose footer lists blocks (ipcBlocks, whose error is
// blocksErr). A footer that did not read that way, or lists fewer record
// batches than arrow-go found, is refused here: arrow-go may still read
// it, and would then allocate whatever size a damaged buffer claims.
func checkBlock(f io.ReaderAt, blocks []ipcBlock, blocksErr error, i int) error {
	switch {
	case blocksErr != nil:
		return fmt.Errorf("the footer's record batches do not read: %w", blocksErr)
	case i >= len(blocks):
		return fmt.Errorf("the footer lists %d record batches, and the file has more", len(blocks))
	}
	return checkCompressed(f, blocks[i])
}
