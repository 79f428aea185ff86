package implicit

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sync/errgroup"
	"gonum.org/v1/gonum/mat"
)

// DefaultChunkRows is the number of whitened rows per compressed chunk: large
// enough for zstd and the GEMMs to run at speed, small enough that a chunk
// and its products (ChunkRows×(k+L) floats per worker) stay a few megabytes.
const DefaultChunkRows = 4096

// RowStoreOptions configure a RowStore. The zero value is valid.
type RowStoreOptions struct {
	// ChunkRows is the number of rows per chunk (default DefaultChunkRows).
	ChunkRows int
	// Float64 stores y in float64 instead of float32. float32 halves the
	// disk and decompression work; its relative rounding (6e-8) is far below
	// the sampling error of any moment estimate.
	// 1/n3 is always kept in float64.
	Float64 bool
	// Workers is the number of goroutines decompressing and multiplying
	// chunks in Scan (default GOMAXPROCS).
	Workers int
}

// ErrCorruptChunk reports a chunk of a RowStore that is truncated or fails
// its checksum.
var ErrCorruptChunk = errors.New("corrupt or truncated row chunk")

// RowStore keeps whitened document rows (y = Wᵀc, K values, and 1/n3) on
// disk in fixed-size chunks, each an independent zstd frame with a checksum,
// in a temporary directory it owns. Scan streams them back, decompressing
// chunks on several goroutines, with memory O(ChunkRows·K) per goroutine
// whatever the number of rows (plus a 24-byte index entry per chunk).
// Close, and any write error, removes the files.
type RowStore struct {
	k     int
	opt   RowStoreOptions
	files []*rowFile
	index []rowChunk
	rows  int64
	size  int64

	pend  []float64 // pending rows, up to ChunkRows×K
	pinv  []float64
	raw   []byte
	comp  []byte // the last chunk compressed
	enc   *zstd.Encoder
	dec   *zstd.Decoder
	state error // sticky: set by a failed write or Close
}

type rowFile struct {
	dir, path string
	f         *os.File
	off       int64
}

type rowChunk struct {
	file int
	off  int64
	size int
	rows int
}

var errStoreClosed = errors.New("implicit: row store is closed")

// NewRowStore creates an empty store for rows of k values in a new
// temporary directory under dir ("" means os.TempDir()).
func NewRowStore(dir string, k int, opt RowStoreOptions) (*RowStore, error) {
	if k < 1 {
		panic(fmt.Sprintf("implicit: NewRowStore with k=%d", k))
	}
	if opt.ChunkRows <= 0 {
		opt.ChunkRows = DefaultChunkRows
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	tmp, err := os.MkdirTemp(dir, "streamfit-rows-")
	if err != nil {
		return nil, fmt.Errorf("implicit: row store: %w", err)
	}
	path := filepath.Join(tmp, "rows.zst")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("implicit: row store: %w", err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true), zstd.WithWindowSize(1<<17))
	if err != nil {
		f.Close()
		os.RemoveAll(tmp)
		return nil, err
	}
	return &RowStore{k: k, opt: opt, files: []*rowFile{{dir: tmp, path: path, f: f}}, enc: enc}, nil
}

// Rows is the number of rows stored (including rows not yet flushed).
func (s *RowStore) Rows() int64 { return s.rows }

// Bytes is the compressed size on disk of the flushed chunks.
func (s *RowStore) Bytes() int64 { return s.size }

// Chunks is the number of flushed chunks.
func (s *RowStore) Chunks() int { return len(s.index) }

// Dir is the temporary directory of the store's own file.
func (s *RowStore) Dir() string { return s.files[0].dir }

// Append stores the n rows of y (n×K row-major) with their 1/n3 values.
func (s *RowStore) Append(y, inv3 []float64) error {
	if s.state != nil {
		return s.state
	}
	if len(y) != len(inv3)*s.k {
		panic(fmt.Sprintf("implicit: RowStore.Append: %d values for %d rows of %d", len(y), len(inv3), s.k))
	}
	for len(inv3) > 0 {
		room := s.opt.ChunkRows - len(s.pinv)
		n := min(room, len(inv3))
		s.pend = append(s.pend, y[:n*s.k]...)
		s.pinv = append(s.pinv, inv3[:n]...)
		y, inv3 = y[n*s.k:], inv3[n:]
		s.rows += int64(n)
		if len(s.pinv) == s.opt.ChunkRows {
			if err := s.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Finish writes the last partial chunk; Scan calls it.
func (s *RowStore) Finish() error {
	if s.state != nil {
		return s.state
	}
	if len(s.pinv) > 0 {
		return s.flush()
	}
	return nil
}

// valueSize is the bytes per stored y value.
func (s *RowStore) valueSize() int {
	if s.opt.Float64 {
		return 8
	}
	return 4
}

func (s *RowStore) flush() error {
	n := len(s.pinv)
	vs := s.valueSize()
	need := n*s.k*vs + n*8
	if cap(s.raw) < need {
		s.raw = make([]byte, need)
	}
	raw := s.raw[:need]
	p := 0
	for _, v := range s.pend {
		if vs == 8 {
			binary.LittleEndian.PutUint64(raw[p:], math.Float64bits(v))
		} else {
			binary.LittleEndian.PutUint32(raw[p:], math.Float32bits(float32(v)))
		}
		p += vs
	}
	for _, v := range s.pinv {
		binary.LittleEndian.PutUint64(raw[p:], math.Float64bits(v))
		p += 8
	}
	// Into the same buffer every chunk: a fresh one per chunk would be
	// garbage that grows with the rows and sets the peak of the pass.
	s.comp = s.enc.EncodeAll(raw, s.comp[:0])
	comp := s.comp
	rf := s.files[0]
	if _, err := rf.f.Write(comp); err != nil {
		return s.fail(fmt.Errorf("implicit: row store %s: %w", rf.path, err))
	}
	s.index = append(s.index, rowChunk{file: 0, off: rf.off, size: len(comp), rows: n})
	rf.off += int64(len(comp))
	s.size += int64(len(comp))
	s.pend, s.pinv = s.pend[:0], s.pinv[:0]
	return nil
}

// fail closes the store, removing its files, and makes err sticky.
func (s *RowStore) fail(err error) error {
	s.Close()
	s.state = err
	return err
}

// Merge moves o's rows after s's: s takes over o's files (removed by s's
// Close) and o must not be used again. Both must hold rows of the same K.
func (s *RowStore) Merge(o *RowStore) error {
	if s.k != o.k {
		return fmt.Errorf("implicit: cannot merge row stores of k=%d and k=%d", o.k, s.k)
	}
	if err := errors.Join(s.Finish(), o.Finish()); err != nil {
		return err
	}
	base := len(s.files)
	s.files = append(s.files, o.files...)
	for _, c := range o.index {
		c.file += base
		s.index = append(s.index, c)
	}
	s.rows += o.rows
	s.size += o.size
	o.files, o.index = nil, nil
	o.state = errStoreClosed
	return nil
}

// Close removes the store's files and directories. It is safe to call more
// than once.
func (s *RowStore) Close() error {
	var errs []error
	for _, rf := range s.files {
		if rf.f != nil {
			errs = append(errs, rf.f.Close())
			rf.f = nil
		}
		errs = append(errs, os.RemoveAll(rf.dir))
	}
	s.files, s.index = nil, nil
	if s.dec != nil {
		s.dec.Close()
		s.dec = nil
	}
	if s.state == nil {
		s.state = errStoreClosed
	}
	return errors.Join(errs...)
}

// Scan finishes the store and calls fn for every chunk, with its rows y
// (rows×K) and 1/n3 values, both valid only during the call. Chunk i goes to
// worker i mod Workers, each worker decompressing its own chunks in order,
// so per-worker sums merged in worker order are the same on every run. The
// first error (an I/O error, or ErrCorruptChunk naming the file and chunk)
// stops the scan.
func (s *RowStore) Scan(ctx context.Context, fn func(worker int, y *mat.Dense, inv3 []float64) error) error {
	return s.scan(ctx, fn, nil)
}

// ScanOrdered is Scan for reductions whose result must not depend on
// Workers: compute(worker, y, inv3) runs concurrently, and then
// commit(worker) strictly in chunk order, so a worker adds its chunk's
// partial result to a total in one fixed order.
func (s *RowStore) ScanOrdered(ctx context.Context, compute func(worker int, y *mat.Dense, inv3 []float64), commit func(worker int)) error {
	return s.scan(ctx, func(wk int, y *mat.Dense, inv3 []float64) error { compute(wk, y, inv3); return nil }, commit)
}

// scan runs fn on every chunk (chunk i on worker i mod Workers) and, when
// commit is set, commit after it in chunk order.
func (s *RowStore) scan(ctx context.Context, fn func(worker int, y *mat.Dense, inv3 []float64) error, commit func(worker int)) error {
	if err := s.Finish(); err != nil {
		return err
	}
	if s.dec == nil {
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(s.opt.Workers), zstd.WithDecoderLowmem(true))
		if err != nil {
			return err
		}
		s.dec = dec
	}
	workers := max(1, min(s.opt.Workers, len(s.index)))
	var seq sequencer
	g, ctx := errgroup.WithContext(ctx)
	for wk := range workers {
		g.Go(func() error {
			var comp, raw []byte
			var ybuf, inv []float64
			for i := wk; i < len(s.index); i += workers {
				if err := ctx.Err(); err != nil {
					return err
				}
				c := s.index[i]
				var err error
				comp, raw, err = s.readChunk(i, comp, raw)
				if err != nil {
					return err
				}
				ybuf, inv = s.decode(raw, c.rows, ybuf, inv)
				if err := fn(wk, mat.NewDense(c.rows, s.k, ybuf), inv); err != nil {
					return err
				}
				if commit != nil {
					if err := seq.wait(ctx, i); err != nil {
						return err
					}
					commit(wk)
					seq.done()
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// readChunk reads and decompresses chunk i, checking its size.
func (s *RowStore) readChunk(i int, comp, raw []byte) ([]byte, []byte, error) {
	c := s.index[i]
	rf := s.files[c.file]
	bad := func(err error) error {
		return fmt.Errorf("implicit: row store %s: chunk %d of %d (offset %d, %d bytes): %w: %v", rf.path, i, len(s.index), c.off, c.size, ErrCorruptChunk, err)
	}
	if cap(comp) < c.size {
		comp = make([]byte, c.size)
	}
	comp = comp[:c.size]
	if _, err := rf.f.ReadAt(comp, c.off); err != nil {
		if errors.Is(err, io.EOF) {
			return comp, raw, bad(err)
		}
		return comp, raw, fmt.Errorf("implicit: row store %s: chunk %d: %w", rf.path, i, err)
	}
	raw, err := s.dec.DecodeAll(comp, raw[:0])
	if err != nil {
		return comp, raw, bad(err)
	}
	if want := c.rows*s.k*s.valueSize() + c.rows*8; len(raw) != want {
		return comp, raw, bad(fmt.Errorf("decompressed to %d bytes, want %d", len(raw), want))
	}
	return comp, raw, nil
}

// decode converts a chunk's bytes to rows×K values and rows 1/n3 values.
func (s *RowStore) decode(raw []byte, rows int, y, inv []float64) ([]float64, []float64) {
	y, inv = growTo(y, rows*s.k), growTo(inv, rows)
	vs := s.valueSize()
	p := 0
	for i := range y {
		if vs == 8 {
			y[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[p:]))
		} else {
			y[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[p:])))
		}
		p += vs
	}
	for i := range inv {
		inv[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[p:]))
		p += 8
	}
	return y, inv
}
