package stream

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"runtime"
	"slices"
	"sync"
)

// SpillOptions configure Spill. The zero value spills to os.TempDir(),
// decodes with one goroutine per CPU and warns nobody.
type SpillOptions struct {
	// Dir is the directory of the spill file (default os.TempDir()).
	Dir string
	// Workers is the number of goroutines decoding a pass from the spill
	// file (default GOMAXPROCS).
	Workers int
	// Warn, when non-nil, is called once if the spill file cannot be
	// written (disk full, no such directory); the passes then keep reading
	// the source.
	Warn func(error)
	// Progress, when non-nil, is advanced by the documents and bytes read
	// from the spill file (passes over the source advance it themselves).
	Progress *Progress
}

// SpillSource is a DocSource that keeps a compact binary copy of another
// source's documents on local disk: the first pass that runs to the end
// reads the source and writes the copy as it goes, and the later passes
// read the copy, which costs a fraction of re-inflating and re-parsing text.
// A pass stopped early (by its consumer, a cancelled context or an error)
// leaves no copy, and the next pass reads the source again. A copy that
// cannot be written (disk full) is given up with one warning; the passes
// then read the source. Where the system allows it (unix), the file's name
// is removed as soon as it is created, so the space is freed when the
// process ends, however it ends; elsewhere Close removes it. Passes may run
// one after another or concurrently.
type SpillSource struct {
	src DocSource
	o   SpillOptions

	mu      sync.Mutex
	done    *spillHandle // the complete spill file, nil while there is none
	writing *spillHandle // the file a pass is writing now, nil when none is
	failed  bool         // a write failed: never try again
	closed  bool
}

// spillHandle is an open spill file.
type spillHandle struct {
	f        spillFile
	size     int64
	unlinked bool // its name is already removed
}

// remove closes the file and removes its name.
func (h *spillHandle) remove() {
	h.f.Close()
	if !h.unlinked {
		os.Remove(h.f.Name())
	}
}

// spillCreate makes the spill file in dir, open for writing and reading;
// tests replace it to fail writes.
var spillCreate = func(dir string) (spillFile, error) {
	return os.CreateTemp(dir, "streamfit-spill-*.bin")
}

// spillBuffer is the write buffer of a spill file; tests make it small to
// meet a write error in the middle of a pass.
var spillBuffer = 1 << 20

// spillFile is what the spill is written to and read from.
type spillFile interface {
	io.WriteCloser
	io.ReaderAt
	Name() string
}

// Spill wraps src so that its later passes read a spill file written by
// its first complete pass (see SpillSource).
func Spill(src DocSource, o SpillOptions) *SpillSource {
	if o.Dir == "" {
		o.Dir = os.TempDir()
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return &SpillSource{src: src, o: o}
}

// Info is the wrapped source's.
func (s *SpillSource) Info() Info { return s.src.Info() }

// Spilled reports whether a complete spill file exists, and its size in
// bytes.
func (s *SpillSource) Spilled() (bool, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		return false, 0
	}
	return true, s.done.size
}

// Close removes the spill file and closes the wrapped source; no pass may
// be running. (A file a pass is still writing is removed when the pass
// ends.)
func (s *SpillSource) Close() error {
	s.mu.Lock()
	s.closed = true
	if s.done != nil {
		s.done.remove()
		s.done = nil
	}
	if h := s.writing; h != nil && !h.unlinked {
		os.Remove(h.f.Name())
	}
	s.mu.Unlock()
	return Close(s.src)
}

// Docs makes one pass: over the spill file when a complete one exists,
// else over the source, writing the spill file when no other pass is.
func (s *SpillSource) Docs(ctx context.Context) iter.Seq2[*Docs, error] {
	return func(yield func(*Docs, error) bool) {
		s.mu.Lock()
		done := s.done
		var w *spillWriter
		if done == nil {
			w = s.startWriting()
		}
		s.mu.Unlock()
		if done != nil {
			s.readSpill(ctx, done, yield)
			return
		}
		complete := false
		defer func() {
			if w != nil {
				s.endWriting(w, complete)
			}
		}()
		for b, err := range s.src.Docs(ctx) {
			if err != nil {
				yield(nil, err)
				return
			}
			if w != nil {
				if err := w.write(b); err != nil {
					s.endWriting(w, false)
					s.fail(err)
					w = nil
				}
			}
			if !yield(b, nil) {
				return
			}
		}
		complete = ctx.Err() == nil
	}
}

// startWriting opens a spill file for this pass, or returns nil when there
// is no need or no way (another pass writes one, a write failed, closed).
// s.mu is held.
func (s *SpillSource) startWriting() *spillWriter {
	if s.writing != nil || s.failed || s.closed {
		return nil
	}
	f, err := spillCreate(s.o.Dir)
	if err != nil {
		s.failed = true
		s.warn(err)
		return nil
	}
	// Unix lets an open file lose its name: nothing is left on disk once
	// the process ends, even by a kill -9.
	s.writing = &spillHandle{f: f, unlinked: os.Remove(f.Name()) == nil}
	return &spillWriter{h: s.writing, w: bufio.NewWriterSize(f, spillBuffer)}
}

// endWriting closes the spill file of a pass; a complete one becomes the
// source of the later passes, any other is removed.
func (s *SpillSource) endWriting(w *spillWriter, complete bool) {
	err := w.w.Flush()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writing = nil
	switch {
	case complete && err == nil && !s.closed:
		w.h.size = w.n
		s.done = w.h
		return
	case complete && err != nil && !s.failed:
		s.failed = true
		s.warn(err)
	}
	w.h.remove()
}

// fail gives up spilling after a write error, warning once.
func (s *SpillSource) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.failed {
		s.failed = true
		s.warn(err)
	}
}

// warn reports a spill that cannot be written. s.mu is held.
func (s *SpillSource) warn(err error) {
	if s.o.Warn != nil {
		s.o.Warn(fmt.Errorf("cannot write the spill file in %s, reading the input again on every pass: %w", s.o.Dir, err))
	}
}

// spillWriter encodes one pass's batches into a spill file. Each batch is
// one record: its length in bytes (uvarint), then the batch's Start, number
// of documents and number of entries, each document's number of entries,
// the term ids as zigzag differences from the previous term of the same
// document, and the counts, all as uvarints: 2.2–2.5 bytes an entry on
// real text, 0.7× its gzipped docword, and decoded by a few instructions a
// byte (bench/real/RESULTS.md, "Spill file for repeated passes").
type spillWriter struct {
	h   *spillHandle
	w   *bufio.Writer
	buf []byte
	n   int64
}

// write appends batch b to the spill file.
func (w *spillWriter) write(b *Docs) error {
	p := w.encode(b)
	var head [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(head[:], uint64(len(p)))
	if _, err := w.w.Write(head[:h]); err != nil {
		return err
	}
	if _, err := w.w.Write(p); err != nil {
		return err
	}
	w.n += int64(h + len(p))
	return nil
}

// encode returns the record of batch b, without its length, in w's
// scratch buffer.
func (w *spillWriter) encode(b *Docs) []byte {
	p := w.buf[:0]
	p = binary.AppendUvarint(p, uint64(b.Start))
	p = binary.AppendUvarint(p, uint64(b.Len()))
	p = binary.AppendUvarint(p, uint64(b.NNZ()))
	for i := range b.Len() {
		p = binary.AppendUvarint(p, uint64(b.Offsets[i+1]-b.Offsets[i]))
	}
	for i := range b.Len() {
		prev := int64(0)
		for _, t := range b.Terms[b.Offsets[i]:b.Offsets[i+1]] {
			d := int64(t) - prev
			p = binary.AppendUvarint(p, uint64(d<<1^d>>63))
			prev = int64(t)
		}
	}
	for _, c := range b.Counts {
		p = binary.AppendUvarint(p, uint64(uint32(c)))
	}
	w.buf = p
	return p
}

// errSpill marks a spill file that does not decode.
var errSpill = errors.New("spill file does not decode")

// spillRecord is one batch's bytes, read from the spill file into a
// recycled buffer.
type spillRecord struct{ buf *[]byte }

// readSpill makes one pass over the spill file h: records are read in
// order, decoded in parallel into batches of a pass-long free list, and
// delivered in order.
func (s *SpillSource) readSpill(ctx context.Context, h *spillHandle, yield func(*Docs, error) bool) {
	path := h.f.Name()
	slots := 2*s.o.Workers + 2
	var bufs Recycler[[]byte]
	bufs.Prefill(slots)
	docs := NewFreeList(slots + 2*s.o.Workers)
	r := bufio.NewReaderSize(io.NewSectionReader(h.f, 0, h.size), 1<<16)
	split := func(ctx context.Context, emit func(spillRecord) bool) error {
		for ctx.Err() == nil {
			n, err := binary.ReadUvarint(r)
			if err == io.EOF {
				return nil
			}
			if err != nil || n > 1<<40 {
				return Errorf(path, 0, -1, "", ErrCorrupt, "%v: record length: %v", errSpill, err)
			}
			b := bufs.Get()
			*b = slices.Grow((*b)[:0], int(n))[:n]
			if _, err := io.ReadFull(r, *b); err != nil {
				bufs.Put(b)
				return Errorf(path, 0, -1, "", ErrCorrupt, "%v: %v", errSpill, err)
			}
			s.o.Progress.Add(0, int64(n))
			if !emit(spillRecord{b}) {
				bufs.Put(b)
				return nil
			}
		}
		return nil
	}
	decode := func(_ context.Context, rec spillRecord) (*Docs, error) {
		defer bufs.Put(rec.buf)
		b, err := decodeSpill(*rec.buf, docs)
		if err != nil {
			return nil, Errorf(path, 0, -1, "", ErrCorrupt, "%v: %v", errSpill, err)
		}
		return b, nil
	}
	for b, err := range Ordered(ctx, s.o.Workers, split, decode, (*Docs).Release) {
		if err != nil {
			yield(nil, err)
			return
		}
		s.o.Progress.Add(int64(b.Len()), 0)
		if !yield(b, nil) {
			return
		}
	}
}

// decodeSpill decodes one record written by spillWriter.write into a batch
// from docs. The loops read one-byte values (most of them) inline.
func decodeSpill(p []byte, docs *FreeList) (*Docs, error) {
	start, i := uvarintAt(p, 0)
	ndocs, i := uvarintAt(p, i)
	nnz, i := uvarintAt(p, i)
	if i > len(p) || ndocs > uint64(len(p)) || nnz > uint64(len(p)) {
		return nil, errors.New("bad record header")
	}
	b := docs.Get(int64(start))
	b.Reserve(int(nnz), int(nnz)+int(nnz)/4)
	b.Offsets = slices.Grow(b.Offsets, int(ndocs))
	off := 0
	for range ndocs {
		var v uint64
		if i < len(p) && p[i] < 0x80 {
			v, i = uint64(p[i]), i+1
		} else {
			v, i = uvarintAt(p, i)
		}
		off += int(v)
		b.Offsets = append(b.Offsets, off)
	}
	if i > len(p) || off != int(nnz) {
		b.Release()
		return nil, errors.New("document lengths do not add up")
	}
	b.Terms = b.Terms[:nnz]
	for k := range int(ndocs) {
		prev := int64(0)
		for j := b.Offsets[k]; j < b.Offsets[k+1]; j++ {
			var z uint64
			if i < len(p) && p[i] < 0x80 {
				z, i = uint64(p[i]), i+1
			} else {
				z, i = uvarintAt(p, i)
			}
			prev += int64(z>>1) ^ -int64(z&1)
			b.Terms[j] = int32(prev)
		}
	}
	b.Counts = b.Counts[:nnz]
	for j := range b.Counts {
		var v uint64
		if i < len(p) && p[i] < 0x80 {
			v, i = uint64(p[i]), i+1
		} else {
			v, i = uvarintAt(p, i)
		}
		b.Counts[j] = int32(uint32(v))
	}
	if i != len(p) {
		b.Release()
		return nil, errors.New("record length does not match its contents")
	}
	return b, nil
}

// uvarintAt decodes the uvarint at p[i:] and returns it and the index after
// it; past the end of p or on a malformed value it returns 0 and len(p)+1,
// which every later call passes on.
func uvarintAt(p []byte, i int) (uint64, int) {
	if i >= len(p) {
		return 0, len(p) + 1
	}
	v, n := binary.Uvarint(p[i:])
	if n <= 0 {
		return 0, len(p) + 1
	}
	return v, i + n
}

// DecodeHeavy reports whether reading a pass of a source with this Info
// costs much more than reading a spill file of it: text to parse
// (docword, plain or compressed) or raw text to tokenize. Parquet and Arrow
// lists decode about as fast as the spill file, so they are not.
func DecodeHeavy(info Info) bool {
	switch info.Format {
	case "docword", "text-lines", "text-dir":
		return true
	}
	return info.Layout == "text"
}
