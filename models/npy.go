package models

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/streamfit/streamfit/internal/npy"
)

// ReadNPY reads a k×d matrix of float32 or float64 values in C (row-major)
// order from a NumPy .npy file (format versions 1 to 3), such as
// numpy.save("topics.npy", gensim_lda.get_topics()). Rows are returned as
// written; other element types, Fortran order and shapes that are not two
// dimensional are errors naming the file.
func ReadNPY(path string) ([][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s: not a k×d .npy matrix: %s", path, fmt.Sprintf(format, a...))
	}
	h, err := npy.ReadHeader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if h.Kind != 'f' || (h.Size != 4 && h.Size != 8) {
		return nil, bad("element type %s is not float32 or float64", h.Descr)
	}
	order, size := h.Order, h.Size
	if h.Fortran {
		return nil, bad("Fortran order (save a C-ordered array: numpy.ascontiguousarray)")
	}
	shape := h.Shape
	if len(shape) != 2 {
		return nil, bad("shape %v is not two dimensional", shape)
	}
	if shape[0] < 1 || shape[1] < 1 {
		return nil, bad("shape %v has no entries", shape)
	}
	k, d := shape[0], shape[1]
	if int64(k) > 1<<40/int64(d) {
		return nil, bad("shape (%d, %d) is too large", k, d)
	}
	if st, err := f.Stat(); err == nil {
		if want := h.Bytes + int64(k)*int64(d)*int64(size); st.Size() != want {
			return nil, bad("%d bytes, but a %d×%d matrix of %d-byte values needs %d", st.Size(), k, d, size, want)
		}
	}
	rows := make([][]float64, k)
	buf := make([]byte, d*size)
	for i := range rows {
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, fmt.Errorf("%s: row %d: %w", path, i, err)
		}
		row := make([]float64, d)
		for j := range row {
			if size == 4 {
				row[j] = float64(math.Float32frombits(order.Uint32(buf[4*j:])))
			} else {
				row[j] = math.Float64frombits(order.Uint64(buf[8*j:]))
			}
		}
		rows[i] = row
	}
	return rows, nil
}
