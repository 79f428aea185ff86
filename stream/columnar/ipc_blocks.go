package columnar

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Reading the row counts of an Arrow IPC file's record batches from their
// message headers: arrow-go offers them only by loading each batch (which
// decompresses a compressed body), and a range of record batches must not
// read the batches it skips. The footer lists every batch's block (offset,
// header length, body length); a block starts with the batch's header, a
// flatbuffer Message whose RecordBatch table holds the row count. Only
// those few fields are read, each offset checked against the buffer.

// flatReader reads fields of a flatbuffer. An offset outside the buffer
// sets bad and reads as zero, so a damaged header gives an error, never a
// panic or a huge allocation.
type flatReader struct {
	b   []byte
	bad bool
}

func (r *flatReader) bytes(pos, n int) []byte {
	if pos < 0 || n < 0 || pos > len(r.b)-n {
		r.bad = true
		return make([]byte, n)
	}
	return r.b[pos : pos+n]
}

func (r *flatReader) u8(pos int) int    { return int(r.bytes(pos, 1)[0]) }
func (r *flatReader) u16(pos int) int   { return int(binary.LittleEndian.Uint16(r.bytes(pos, 2))) }
func (r *flatReader) i32(pos int) int   { return int(int32(binary.LittleEndian.Uint32(r.bytes(pos, 4)))) }
func (r *flatReader) u32(pos int) int   { return int(binary.LittleEndian.Uint32(r.bytes(pos, 4))) }
func (r *flatReader) i64(pos int) int64 { return int64(binary.LittleEndian.Uint64(r.bytes(pos, 8))) }

// ref follows the offset stored at pos to the table or vector it points to.
func (r *flatReader) ref(pos int) int { return pos + r.u32(pos) }

// field returns the position of field i of the table at t, or 0 when the
// field is absent (holds its default).
func (r *flatReader) field(t, i int) int {
	vt := t - r.i32(t)
	// As flatbuffers reads it: a field whose slot starts inside the vtable
	// is present (a damaged, odd vtable size makes its last slot half in).
	if r.bad || 4+2*i >= r.u16(vt) {
		return 0
	}
	if off := r.u16(vt + 4 + 2*i); off != 0 {
		return t + off
	}
	return 0
}

// ipcBlock is a record batch's place in an Arrow IPC file.
type ipcBlock struct {
	offset     int64
	meta, body int64
}

// Field numbers of the Arrow IPC schema (format/File.fbs, Message.fbs).
const (
	fbFooterRecordBatches = 3
	fbMessageHeaderType   = 1
	fbMessageHeader       = 2
	fbRecordBatchLength   = 0
	fbHeaderRecordBatch   = 3 // MessageHeader union: RecordBatch
	ipcBlockSize          = 24
	ipcFooterTail         = 10 // int32 footer length + "ARROW1"
	// maxIPCHeader bounds a record batch header (a few hundred bytes per
	// column), so a damaged block length is not allocated.
	maxIPCHeader = 64 << 20
)

// ipcBlocks reads the record batch blocks listed in the footer of the
// Arrow IPC file f of size bytes.
func ipcBlocks(f io.ReaderAt, size int64) ([]ipcBlock, error) {
	buf, err := ipcFooter(f, size)
	if err != nil {
		return nil, err
	}
	r := &flatReader{b: buf}
	var blocks []ipcBlock
	if fld := r.field(r.ref(0), fbFooterRecordBatches); fld != 0 {
		vec := r.ref(fld)
		n := r.u32(vec)
		if n > len(buf)/ipcBlockSize {
			r.bad = true
			n = 0
		}
		blocks = make([]ipcBlock, n)
		for i := range blocks {
			at := vec + 4 + i*ipcBlockSize
			blocks[i] = ipcBlock{offset: r.i64(at), meta: int64(r.i32(at + 8)), body: r.i64(at + 16)}
			b := blocks[i]
			if b.offset < 0 || b.meta < 8 || b.meta > maxIPCHeader || b.body < 0 || b.offset > size || b.meta+b.body > size-b.offset {
				return nil, fmt.Errorf("record batch %d: block outside the file", i)
			}
		}
	}
	if r.bad {
		return nil, fmt.Errorf("malformed Arrow IPC footer")
	}
	return blocks, nil
}

// ipcRows reads the row count of the record batch in block b from its
// message header, without reading its body.
func ipcRows(f io.ReaderAt, b ipcBlock) (int64, error) {
	buf := make([]byte, b.meta) // at least 8 bytes (ipcBlocks)
	if _, err := f.ReadAt(buf, b.offset); err != nil {
		return 0, err
	}
	// The header is prefixed by its length, after a continuation marker
	// since Arrow 0.15.
	at := 0
	if binary.LittleEndian.Uint32(buf) == 0xffffffff {
		at = 4
	}
	n := int(int32(binary.LittleEndian.Uint32(buf[at:])))
	if n <= 0 || n > len(buf)-at-4 {
		return 0, fmt.Errorf("bad message header length %d", n)
	}
	r := &flatReader{b: buf[at+4 : at+4+n]}
	msg := r.ref(0)
	kind := r.field(msg, fbMessageHeaderType)
	if kind == 0 || r.u8(kind) != fbHeaderRecordBatch {
		if r.bad {
			return 0, fmt.Errorf("malformed message header")
		}
		return 0, fmt.Errorf("message is not a record batch")
	}
	var rows int64
	if hdr := r.field(msg, fbMessageHeader); hdr != 0 {
		if l := r.field(r.ref(hdr), fbRecordBatchLength); l != 0 {
			rows = r.i64(l)
		}
	}
	if r.bad || rows < 0 {
		return 0, fmt.Errorf("malformed message header")
	}
	return rows, nil
}
