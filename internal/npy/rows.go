package npy

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/streamfit/streamfit/stream"
)

// Matrix is an .npy array read as n rows of d numbers: a C-order array of
// shape (n, d), or (n,) read as one column.
type Matrix struct {
	Header
	N int64
	D int
}

// AsMatrix checks that h is an array of numbers of shape (n, d) or (n,)
// in C order, and returns it as such. The error says what to change, in
// NumPy's terms.
func AsMatrix(h Header) (Matrix, error) {
	m := Matrix{Header: h}
	switch {
	case !numeric(h):
		return m, fmt.Errorf("element type %s: want numbers (float32, float64, integers or booleans; convert with X.astype(np.float64))", h.Descr)
	case h.Fortran && len(h.Shape) > 1 && h.Shape[1] > 1:
		return m, fmt.Errorf("a Fortran-order (column-major) array: save the rows in C order (np.save(path, np.ascontiguousarray(X)))")
	}
	switch len(h.Shape) {
	case 1:
		m.N, m.D = int64(h.Shape[0]), 1
	case 2:
		m.N, m.D = int64(h.Shape[0]), h.Shape[1]
	default:
		return m, fmt.Errorf("shape %v: want (samples, features) (reshape with X.reshape(len(X), -1))", h.Shape)
	}
	if m.D == 0 {
		return m, fmt.Errorf("shape %v: the rows have no features", h.Shape)
	}
	if m.N > 0 && int64(m.D) > math.MaxInt64/int64(h.Size)/m.N {
		return m, fmt.Errorf("shape %v: more bytes than a file can hold", h.Shape)
	}
	return m, nil
}

// Bytes is the size of the array's data.
func (m Matrix) Bytes() int64 { return m.N * int64(m.D) * int64(m.Size) }

// numeric reports whether decode reads h's elements.
func numeric(h Header) bool {
	switch h.Kind {
	case 'f':
		return h.Size == 4 || h.Size == 8
	case 'i', 'u':
		return h.Size == 1 || h.Size == 2 || h.Size == 4 || h.Size == 8
	case 'b':
		return h.Size == 1
	}
	return false
}

// decode converts the elements in b, of h's type, to out; the element
// type is looked at once per call, not per element.
func decode(h Header, b []byte, out []float64) {
	o := h.Order
	switch {
	case h.Kind == 'f' && h.Size == 4:
		for i := range out {
			out[i] = float64(math.Float32frombits(o.Uint32(b[4*i:])))
		}
	case h.Kind == 'f':
		for i := range out {
			out[i] = math.Float64frombits(o.Uint64(b[8*i:]))
		}
	case h.Size == 1 && h.Kind == 'i':
		for i := range out {
			out[i] = float64(int8(b[i]))
		}
	case h.Size == 1: // 'u' and 'b'
		for i := range out {
			out[i] = float64(b[i])
		}
	case h.Size == 2 && h.Kind == 'i':
		for i := range out {
			out[i] = float64(int16(o.Uint16(b[2*i:])))
		}
	case h.Size == 2:
		for i := range out {
			out[i] = float64(o.Uint16(b[2*i:]))
		}
	case h.Size == 4 && h.Kind == 'i':
		for i := range out {
			out[i] = float64(int32(o.Uint32(b[4*i:])))
		}
	case h.Size == 4:
		for i := range out {
			out[i] = float64(o.Uint32(b[4*i:]))
		}
	case h.Kind == 'i':
		for i := range out {
			out[i] = float64(int64(o.Uint64(b[8*i:])))
		}
	default:
		for i := range out {
			out[i] = float64(o.Uint64(b[8*i:]))
		}
	}
}

// AsIDs checks that h is a one-dimensional array of n integers: the
// group (set or sequence) id of each row.
func AsIDs(h Header, n int64) error {
	if (h.Kind != 'i' && h.Kind != 'u') || !numeric(h) {
		return fmt.Errorf("element type %s: want integer ids", h.Descr)
	}
	if len(h.Shape) != 1 || int64(h.Shape[0]) != n {
		return fmt.Errorf("shape %v: want one id per row, (%d,)", h.Shape, n)
	}
	return nil
}

// Rows is one pass over the rows of a Matrix read from an io.Reader
// standing at its first element, optionally with the group id of each row
// read from a second reader; it yields batches of stream.Dense.
type Rows struct {
	// Path and Member name the input in errors (Member is empty for a
	// .npy file; the column of an error is then the column's index).
	Path, Member string
	M            Matrix
	R            io.Reader
	// Cols are the columns to keep, in order; nil keeps all.
	Cols []int
	// IDs, when not nil, reads the ids of the rows (IDHeader's type).
	IDs      io.Reader
	IDHeader Header
	IDMember string
	O        stream.Options
}

// Each reads the rows in batches of at most o.BatchRows rows and
// o.BatchBytes bytes and hands them to yield, which takes ownership;
// it stops when yield returns false. A NaN or infinity, and data that ends
// before the header's shape, are errors naming the row and column.
func (p *Rows) Each(ctx context.Context, yield func(*stream.Dense) bool) error {
	cols := p.Cols
	width := p.M.D
	if cols != nil {
		width = len(cols)
	}
	per := max(1, min(p.O.BatchRows, p.O.BatchBytes/(8*max(p.M.D, 1))))
	size := int64(p.M.Size)
	raw := make([]byte, int64(per)*int64(p.M.D)*size)
	all := make([]float64, per*p.M.D)
	var idRaw []byte
	var ids []float64
	if p.IDs != nil {
		idRaw, ids = make([]byte, per*p.IDHeader.Size), make([]float64, per)
	}
	for start := int64(0); start < p.M.N; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := int(min(int64(per), p.M.N-start))
		buf := raw[:int64(n)*int64(p.M.D)*size]
		if got, err := io.ReadFull(p.R, buf); err != nil {
			row := start + int64(got)/(int64(p.M.D)*size)
			return stream.Errorf(p.Path, 0, row, p.Member, stream.ErrCorrupt, "the data ends at row %d of the %d its header declares (%v)", row, p.M.N, err)
		}
		vals := all[:n*p.M.D]
		decode(p.M.Header, buf, vals)
		b := stream.NewDense(start, width)
		if cap(b.Data) < n*width {
			b.Data = make([]float64, 0, per*width)
		}
		for i := range n {
			row := vals[i*p.M.D : (i+1)*p.M.D]
			for j, v := range row {
				if v-v != 0 {
					b.Release()
					return stream.Errorf(p.Path, 0, start+int64(i), p.column(j), stream.ErrValue, "value %v: every value must be a finite number", v)
				}
			}
			if cols == nil {
				b.Data = append(b.Data, row...)
			} else {
				for _, c := range cols {
					b.Data = append(b.Data, row[c])
				}
			}
		}
		b.Rows = n
		if p.IDs != nil {
			ib := idRaw[:n*p.IDHeader.Size]
			if _, err := io.ReadFull(p.IDs, ib); err != nil {
				b.Release()
				return stream.Errorf(p.Path, 0, start, p.IDMember, stream.ErrCorrupt, "the ids end before row %d (%v)", start+int64(n), err)
			}
			decode(p.IDHeader, ib, ids[:n])
			b.Group = b.Group[:0]
			for _, v := range ids[:n] {
				b.Group = append(b.Group, int64(v))
			}
		}
		p.O.Progress.Add(int64(n), int64(len(buf)))
		start += int64(n)
		if !yield(b) {
			return nil
		}
	}
	return nil
}

// column names column j of the array in an error: its index for a bare
// array, "member[j]" inside an .npz file.
func (p *Rows) column(j int) string {
	if p.Member == "" {
		return strconv.Itoa(j)
	}
	return p.Member + "[" + strconv.Itoa(j) + "]"
}
