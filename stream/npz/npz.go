// Package npz reads sparse matrices of counts saved by scipy's
// scipy.sparse.save_npz, documents as rows and terms as columns: what
// scikit-learn's CountVectorizer.fit_transform returns, saved as it is. It
// registers the "npz" format with the stream registry, through which
// stream.Open reads such files.
//
// A .npz file is a zip of NumPy arrays; save_npz writes a CSR matrix as
// format ("csr"), shape (documents, terms), indptr, indices and data. A pass
// inflates indptr, indices and data side by side, a batch of documents at
// a time, so memory does not grow with the matrix. Other sparse formats
// (csc, coo, …) are refused with the conversion that would do (X.tocsr()).
package npz

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/streamfit/streamfit/internal/npy"
	"github.com/streamfit/streamfit/stream"
)

// Format is the registry name of the format.
const Format = "npz"

func init() {
	stream.Register(stream.Format{
		Name:     Format,
		Match:    Match,
		OpenDocs: func(path string, o stream.Options) (stream.DocSource, error) { return Open(path, o) },
		// Dense samples saved by np.savez (dense.go).
		OpenDense: func(path string, o stream.Options) (stream.DenseSource, error) { return OpenDense(path, o) },
	})
}

// zipMagic starts a zip file (a local file header).
var zipMagic = []byte("PK\x03\x04")

// Match scores path: 2 for a zip file named .npz, 1 for the name alone.
// (A zip file is not claimed by its content alone: it may hold anything.)
func Match(path string, head []byte) int {
	if strings.ToLower(filepath.Ext(path)) != ".npz" {
		return 0
	}
	if bytes.HasPrefix(head, zipMagic) {
		return 2
	}
	return 1
}

// Source is a .npz sparse matrix opened for reading; every pass reopens
// the file.
type Source struct {
	path   string
	o      stream.Options
	d, nnz int64
	info   stream.Info
	stamp  stream.Stamp // the file as opened: every pass checks it is still so
}

// arrays are the members of a CSR matrix that a pass reads.
var arrays = [3]string{"indptr.npy", "indices.npy", "data.npy"}

// Open checks that path holds a CSR matrix (its format, shape and array
// headers), and reads the vocabulary o.VocabPath names, whose length must
// be the number of columns.
func Open(path string, o stream.Options) (*Source, error) {
	o = o.WithDefaults()
	z, err := openZip(path)
	if err != nil {
		if e := truncated(path); e != nil {
			return nil, e
		}
		return nil, stream.Errorf(path, 0, -1, "", stream.ErrFormat, "not a .npz (zip) file: %v", err)
	}
	defer z.Close()
	readAll := func(name string, limit int64) (npy.Header, []byte, error) {
		rc, h, err := openMember(z.Reader, path, name)
		if err != nil {
			return h, nil, err
		}
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(rc, limit))
		if err != nil {
			return h, nil, stream.Errorf(path, 0, -1, name, stream.ErrCorrupt, "%v", err)
		}
		return h, b, nil
	}
	fh, fb, err := readAll("format.npy", 64)
	if err != nil {
		return nil, err
	}
	format := strings.TrimRight(string(fb), "\x00")
	if fh.Kind == 'U' {
		format = strings.ReplaceAll(format, "\x00", "")
	}
	if format != "csr" {
		return nil, stream.Errorf(path, 0, -1, "format.npy", stream.ErrSchema, "a %q matrix; save the CSR form, documents as rows (scipy.sparse.save_npz(path, X.tocsr()))", format)
	}
	sh, sb, err := readAll("shape.npy", 64)
	if err != nil {
		return nil, err
	}
	shape, err := ints(sh, sb)
	if err != nil || len(shape) != 2 || shape[0] < 0 || shape[1] < 0 {
		return nil, stream.Errorf(path, 0, -1, "shape.npy", stream.ErrSchema, "shape %v is not (documents, terms)", shape)
	}
	s := &Source{path: path, o: o, d: shape[0]}
	if shape[1] > math.MaxInt32 {
		return nil, stream.Errorf(path, 0, -1, "shape.npy", stream.ErrValue, "%d terms: more than %d", shape[1], math.MaxInt32)
	}
	var hs [3]npy.Header
	for i, name := range arrays {
		rc, h, err := openMember(z.Reader, path, name)
		if err != nil {
			return nil, err
		}
		rc.Close()
		hs[i] = h
		if err := checkArray(path, name, hs[i]); err != nil {
			return nil, err
		}
	}
	if n := hs[0].Len(); n != s.d+1 {
		return nil, stream.Errorf(path, 0, -1, "indptr.npy", stream.ErrSchema, "%d row pointers for %d documents", n, s.d)
	}
	if hs[1].Len() != hs[2].Len() {
		return nil, stream.Errorf(path, 0, -1, "data.npy", stream.ErrSchema, "%d values for %d indices", hs[2].Len(), hs[1].Len())
	}
	s.nnz = hs[1].Len()
	if s.stamp, err = stream.StampFile(path, nil); err != nil {
		return nil, err
	}
	s.info = stream.Info{Path: path, Format: Format, Layout: "csr", Terms: int(shape[1]), Rows: s.d, NNZ: s.nnz,
		Checksum: "CRC-32 of each member (zip), checked at the end of a pass"}
	if st, err := stream.StatFile(path); err == nil {
		s.info.Bytes = st.Size()
	}
	if o.VocabPath != "" {
		words, err := stream.ReadVocab(o.VocabPath)
		if err != nil {
			return nil, err
		}
		if int64(len(words)) != shape[1] {
			return nil, stream.Errorf(path, 0, -1, "", stream.ErrValue, "%d terms but the vocabulary %s has %d words", shape[1], o.VocabPath, len(words))
		}
		s.info.Vocab = words
	}
	return s, nil
}

// openMember opens the array name of the .npz file z (at path) and reads
// its header; the caller closes the reader, which stands at the array's
// first element (buffered: the members are read a batch at a time, side by
// side).
func openMember(z *zip.Reader, path, name string) (io.ReadCloser, npy.Header, error) {
	var h npy.Header
	f := find(z, name)
	if f == nil {
		return nil, h, stream.Errorf(path, 0, -1, name, stream.ErrSchema, "no %s: not a sparse matrix saved by scipy.sparse.save_npz", name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, h, stream.Errorf(path, 0, -1, name, stream.ErrCorrupt, "%v", err)
	}
	br := struct {
		*bufio.Reader
		io.Closer
	}{bufio.NewReaderSize(rc, 256<<10), rc}
	if h, err = npy.ReadHeader(br); err != nil {
		rc.Close()
		return nil, h, stream.Errorf(path, 0, -1, name, stream.ErrCorrupt, "%v", err)
	}
	return br, h, nil
}

// find returns the member of z named name, or nil.
func find(z *zip.Reader, name string) *zip.File {
	for _, f := range z.File {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// checkArray refuses an array a CSR pass cannot read: not one
// dimensional, not of numbers, or indices and pointers that are not
// integers.
func checkArray(path, name string, h npy.Header) error {
	numeric := h.Kind == 'i' || h.Kind == 'u' || (h.Kind == 'f' && name == "data.npy")
	if !numeric || (h.Size != 1 && h.Size != 2 && h.Size != 4 && h.Size != 8) || (h.Kind == 'f' && h.Size < 4) {
		return stream.Errorf(path, 0, -1, name, stream.ErrSchema, "element type %s: want integers (counts may also be floats holding whole numbers)", h.Descr)
	}
	if len(h.Shape) != 1 {
		return stream.Errorf(path, 0, -1, name, stream.ErrSchema, "shape %v is not one dimensional", h.Shape)
	}
	return nil
}

// Info describes the matrix: Rows documents, Terms columns, NNZ stored
// entries (explicit zeros included, which passes leave out).
func (s *Source) Info() stream.Info { return s.info }

// Docs is one pass over the documents, a batch of o.BatchRows at a time.
func (s *Source) Docs(ctx context.Context) iter.Seq2[*stream.Docs, error] {
	return func(yield func(*stream.Docs, error) bool) {
		if err := s.pass(ctx, yield); err != nil {
			yield(nil, err)
		}
	}
}

// pass reads the three arrays side by side and yields the batches; it
// returns the error that ends it, or nil when the consumer stopped.
func (s *Source) pass(ctx context.Context, yield func(*stream.Docs, error) bool) error {
	if err := s.stamp.Check(); err != nil {
		return err
	}
	z, err := openZip(s.path)
	if err != nil {
		return stream.Errorf(s.path, 0, -1, "", stream.ErrCorrupt, "%v", err)
	}
	defer z.Close()
	var rs [3]*reader
	for i, name := range arrays {
		rc, h, err := openMember(z.Reader, s.path, name)
		if err != nil {
			return err
		}
		defer rc.Close()
		rs[i] = &reader{path: s.path, name: name, r: rc, h: h}
	}
	w := int64(s.info.Terms)
	seen := stream.NewDupTerms(0) // grows with the ids met, not the declared shape
	var ptr, idx, cnt []int64
	var pending *stream.Docs
	defer func() {
		if pending != nil {
			pending.Release()
		}
	}()
	prev, err := rs[0].next(1, &ptr)
	if err != nil {
		return err
	}
	if prev[0] != 0 {
		return stream.Errorf(s.path, 0, 0, "indptr.npy", stream.ErrValue, "the first row pointer is %d, not 0", prev[0])
	}
	last := prev[0]
	for start := int64(0); start < s.d; {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		n := min(int64(s.o.BatchRows), s.d-start)
		p, err := rs[0].next(n, &ptr)
		if err != nil {
			return err
		}
		hi := p[len(p)-1]
		if hi < last || hi > s.nnz {
			return stream.Errorf(s.path, 0, start, "indptr.npy", stream.ErrValue, "row pointers outside 0..%d or decreasing", s.nnz)
		}
		terms, err := rs[1].next(hi-last, &idx)
		if err != nil {
			return err
		}
		counts, err := rs[2].next(hi-last, &cnt)
		if err != nil {
			return err
		}
		b := stream.NewDocs(start)
		lo := last
		for i, e := range p {
			row := start + int64(i)
			seen.Next()
			if e < lo || e > hi {
				b.Release()
				return stream.Errorf(s.path, 0, row, "indptr.npy", stream.ErrValue, "row pointers decrease")
			}
			for j := lo - last; j < e-last; j++ {
				t, c := terms[j], counts[j]
				switch {
				case t < 0 || t >= w:
					b.Release()
					return stream.Errorf(s.path, 0, row, "indices.npy", stream.ErrValue, "term id %d outside 0..%d", t, w-1)
				case c < 0 || c > math.MaxInt32:
					b.Release()
					return stream.Errorf(s.path, 0, row, "data.npy", stream.ErrValue, "count %d is not in 0..%d", c, math.MaxInt32)
				case seen.Add(t):
					b.Release()
					return stream.Errorf(s.path, 0, row, "indices.npy", stream.ErrValue, "term %d appears twice in the document (sum duplicates first: X.sum_duplicates())", t)
				}
				if c > 0 {
					b.Add(int32(t), int32(c))
				}
			}
			b.EndDoc()
			lo = e
		}
		last = hi
		s.o.Progress.Add(n, 0)
		start += n
		// One batch is held back: the last one waits for the checks
		// below.
		if pending != nil {
			ok := yield(pending, nil)
			pending = nil // the consumer's now
			if !ok {
				b.Release()
				return nil
			}
		}
		pending = b
	}
	if last != s.nnz {
		return stream.Errorf(s.path, 0, s.d-1, "indptr.npy", stream.ErrValue, "the last row pointer is %d, not the %d entries", last, s.nnz)
	}
	// Each member read to its end: archive/zip then checks its CRC-32,
	// which catches damage the values themselves do not show (a count
	// changed from 3 to 2).
	for _, r := range rs {
		if _, err := io.Copy(io.Discard, r.r); err != nil {
			if errors.Is(err, zip.ErrChecksum) {
				return stream.Errorf(s.path, 0, -1, r.name, stream.ErrCorrupt, "the member's data does not match its CRC-32: the file is damaged")
			}
			return stream.Errorf(s.path, 0, -1, r.name, stream.ErrCorrupt, "%v", err)
		}
	}
	if err := s.stamp.Check(); err != nil {
		return err
	}
	if pending != nil {
		yield(pending, nil)
		pending = nil
	}
	return nil
}

// readChunk bounds the elements one read allocates for: a damaged header
// may declare more than the file holds, which the read then finds out
// before the memory is spent.
const readChunk = 1 << 20

// reader reads one array's elements in order.
type reader struct {
	path, name string
	r          io.Reader
	h          npy.Header
	read       int64
	buf        []byte
}

// next reads the next n elements into *out (reused) as int64; floats
// must hold whole numbers.
func (r *reader) next(n int64, out *[]int64) ([]int64, error) {
	if r.read+n > r.h.Len() {
		return nil, stream.Errorf(r.path, 0, -1, r.name, stream.ErrValue, "needs more than its %d elements", r.h.Len())
	}
	size := int64(r.h.Size)
	v := (*out)[:0]
	for n > 0 {
		m := min(n, readChunk)
		if int64(cap(r.buf)) < m*size {
			r.buf = make([]byte, m*size)
		}
		buf := r.buf[:m*size]
		if _, err := io.ReadFull(r.r, buf); err != nil {
			return nil, stream.Errorf(r.path, 0, -1, r.name, stream.ErrCorrupt, "truncated: %v", err)
		}
		at := len(v)
		v = slices.Grow(v, int(m))[:at+int(m)]
		if err := decode(r.h, buf, v[at:]); err != nil {
			i := int64(0)
			var ee *elemError
			if errors.As(err, &ee) {
				i = int64(ee.i)
			}
			return nil, stream.Errorf(r.path, 0, -1, r.name, stream.ErrValue, "element %d: %v", r.read+i, err)
		}
		r.read += m
		n -= m
	}
	*out = v
	return v, nil
}

// ints decodes a whole small array (shape.npy).
func ints(h npy.Header, b []byte) ([]int64, error) {
	if h.Kind != 'i' && h.Kind != 'u' || h.Size == 0 || int64(len(b)) != h.Len()*int64(h.Size) {
		return nil, fmt.Errorf("not %d integers", h.Len())
	}
	v := make([]int64, h.Len())
	return v, decode(h, b, v)
}

// elemError is a value decode refuses: element i of its slice.
type elemError struct {
	i   int
	err error
}

func (e *elemError) Error() string { return e.err.Error() }

// decode converts the elements in b, of h's type, to out; the element
// type is looked at once, not per element. A value it refuses is an
// *elemError.
func decode(h npy.Header, b []byte, out []int64) error {
	o, size := h.Order, h.Size
	whole := func(x float64) (int64, error) {
		if x != math.Trunc(x) || math.IsInf(x, 0) || x > math.MaxInt32 || x < math.MinInt32 {
			return 0, fmt.Errorf("count %v is not a whole number", x)
		}
		return int64(x), nil
	}
	var err error
	switch {
	case h.Kind == 'f' && size == 4:
		for i := range out {
			if out[i], err = whole(float64(math.Float32frombits(o.Uint32(b[4*i:])))); err != nil {
				return &elemError{i, err}
			}
		}
		return nil
	case h.Kind == 'f':
		for i := range out {
			if out[i], err = whole(math.Float64frombits(o.Uint64(b[8*i:]))); err != nil {
				return &elemError{i, err}
			}
		}
		return nil
	}
	var get func(e []byte) int64
	signed := h.Kind == 'i'
	switch {
	case size == 1 && signed:
		get = func(e []byte) int64 { return int64(int8(e[0])) }
	case size == 1:
		get = func(e []byte) int64 { return int64(e[0]) }
	case size == 2 && signed:
		get = func(e []byte) int64 { return int64(int16(o.Uint16(e))) }
	case size == 2:
		get = func(e []byte) int64 { return int64(o.Uint16(e)) }
	case size == 4 && signed:
		get = func(e []byte) int64 { return int64(int32(o.Uint32(e))) }
	case size == 4:
		get = func(e []byte) int64 { return int64(o.Uint32(e)) }
	case size == 8 && signed:
		get = func(e []byte) int64 { return int64(o.Uint64(e)) }
	case size == 8:
		get = func(e []byte) int64 { return int64(o.Uint64(e)) }
	default:
		return fmt.Errorf("element type %s", h.Descr)
	}
	for i := range out {
		out[i] = get(b[i*size:])
	}
	if size == 8 && !signed {
		for i, x := range out {
			if x < 0 {
				return &elemError{i, fmt.Errorf("value %d out of range", uint64(x))}
			}
		}
	}
	return nil
}

// zipFile is a .npz archive opened by openZip.
type zipFile struct {
	*zip.Reader
	f stream.File
}

// Close closes the archive's file.
func (z *zipFile) Close() error { return z.f.Close() }

// openZip opens the archive at path, a local file or one of a registered
// file system (stream.OpenFile).
func openZip(path string) (*zipFile, error) {
	f, err := stream.OpenFile(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil {
		var r *zip.Reader
		if r, err = zip.NewReader(f, st.Size()); err == nil {
			return &zipFile{Reader: r, f: f}, nil
		}
	}
	f.Close()
	return nil, err
}

// truncated explains why the zip reader refused a file that starts as a
// zip file: its members are walked from the start (their local headers
// only) to the byte where they, or the file, end. nil when the file does
// not start as a zip file.
func truncated(path string) error {
	f, err := stream.OpenFile(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	size := st.Size()
	read := func(at int64, n int) []byte {
		b := make([]byte, n)
		if at < 0 || at+int64(n) > size {
			return nil
		}
		if _, err := f.ReadAt(b, at); err != nil {
			return nil
		}
		return b
	}
	if !bytes.Equal(read(0, 4), zipMagic) {
		return nil
	}
	at, last := int64(0), ""
	for {
		h := read(at, 30)
		if h == nil || !bytes.Equal(h[:4], zipMagic) {
			break
		}
		flags := binary.LittleEndian.Uint16(h[6:])
		csize := int64(binary.LittleEndian.Uint32(h[18:]))
		nlen, xlen := int(binary.LittleEndian.Uint16(h[26:])), int(binary.LittleEndian.Uint16(h[28:]))
		nx := read(at+30, nlen+xlen)
		if nx == nil {
			break
		}
		last = string(nx[:nlen])
		if extra := nx[nlen:]; csize == 0xffffffff {
			// ZIP64: the sizes are in the extra field 0x0001.
			for len(extra) >= 4 {
				id, n := binary.LittleEndian.Uint16(extra), int(binary.LittleEndian.Uint16(extra[2:]))
				if id == 1 && n >= 16 && len(extra) >= 4+n {
					csize = int64(binary.LittleEndian.Uint64(extra[12:]))
					break
				}
				extra = extra[min(4+n, len(extra)):]
			}
		}
		body := at + 30 + int64(nlen+xlen)
		if flags&8 != 0 && csize == 0 {
			// The sizes follow the data (a streamed write): the member
			// ends at the next header.
			next := nextHeader(f, body, size)
			if next < 0 {
				return stream.Errorf(path, 0, -1, last, stream.ErrCorrupt, "truncated: the file ends at byte %d, inside this member", size)
			}
			at = next
			continue
		}
		if body+csize > size {
			return stream.Errorf(path, 0, -1, last, stream.ErrCorrupt, "truncated: the file ends at byte %d, inside this member (whose data runs to byte %d)", size, body+csize)
		}
		at = body + csize
		if flags&8 != 0 {
			if d := read(at, 4); d != nil && binary.LittleEndian.Uint32(d) == 0x08074b50 {
				at += 4 // the data descriptor's optional signature
			}
			at += 12
		}
	}
	if h := read(at, 4); h != nil && bytes.Equal(h, []byte("PK\x01\x02")) {
		return stream.Errorf(path, 0, -1, "", stream.ErrCorrupt, "truncated or damaged: the zip directory from byte %d on does not read", at)
	}
	switch {
	case last == "":
		return stream.Errorf(path, 0, -1, "", stream.ErrCorrupt, "truncated or damaged: the file ends at byte %d, inside its first member's header", size)
	case at >= size:
		return stream.Errorf(path, 0, -1, "", stream.ErrCorrupt, "truncated: the file ends at byte %d, after its member %s, where the zip directory should follow", size, last)
	}
	return stream.Errorf(path, 0, -1, "", stream.ErrCorrupt, "truncated or damaged: the zip directory at the end of its %d bytes is missing or unreadable (its members read up to byte %d, the last %s)", size, at, last)
}

// nextHeader returns the offset of the first zip header (a member's or the
// directory's) at or after from in f, or of the byte after the first data
// descriptor, or -1 if there is none.
func nextHeader(f io.ReaderAt, from, size int64) int64 {
	buf := make([]byte, 64<<10)
	for at := from; at < size; at += int64(len(buf)) - 3 {
		n, _ := f.ReadAt(buf, at)
		b := buf[:n]
		for i := 0; i+4 <= len(b); i++ {
			if b[i] != 'P' || b[i+1] != 'K' {
				continue
			}
			switch {
			case b[i+2] == 3 && b[i+3] == 4, b[i+2] == 1 && b[i+3] == 2:
				return at + int64(i)
			case b[i+2] == 7 && b[i+3] == 8:
				return at + int64(i) + 16 // after the data descriptor
			}
		}
		if n < len(buf) {
			break
		}
	}
	return -1
}
