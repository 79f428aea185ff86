// Package ndarray reads dense samples as NumPy holds them: a .npy file of
// shape (samples, features) — what np.save(path, X) writes for the X a
// scikit-learn user passes to fit — of float32, float64, integers or
// booleans, in C order. It registers the "npy" format with the stream
// registry, through which stream.OpenDense reads such files. (The members
// of an .npz archive are read by stream/npz.)
//
// A pass reads the array a batch of rows at a time, so memory does not
// grow with the number of rows. Every value must be finite: a NaN or an
// infinity is an error naming its row and column.
package ndarray

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/streamfit/streamfit/internal/npy"
	"github.com/streamfit/streamfit/stream"
)

// Format is the registry name of the format.
const Format = "npy"

// LayoutArray is the layout (stream.Info.Layout) of an array's rows.
const LayoutArray = "array"

func init() {
	stream.Register(stream.Format{
		Name:      Format,
		Match:     Match,
		OpenDense: func(path string, o stream.Options) (stream.DenseSource, error) { return Open(path, o) },
	})
}

// Match scores path: 2 for a file that starts with NumPy's magic, 1 for
// the name .npy alone.
func Match(path string, head []byte) int {
	if bytes.HasPrefix(head, []byte(npy.Magic)) {
		return 2
	}
	if strings.ToLower(filepath.Ext(path)) == ".npy" {
		return 1
	}
	return 0
}

// Source is a .npy array opened for reading; every pass reopens the file.
type Source struct {
	path  string
	o     stream.Options
	m     npy.Matrix
	cols  []int
	info  stream.Info
	stamp stream.Stamp
}

// Open reads the header of the array at path and checks that its data is
// all there. o.Columns, when set, chooses columns by their 0-based index
// ("0", "3"); o.GroupColumn cannot be met by a single array (save the ids
// beside it in an .npz file).
func Open(path string, o stream.Options) (*Source, error) {
	o = o.WithDefaults()
	f, err := stream.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := npy.ReadHeader(bufio.NewReader(f))
	if err != nil {
		return nil, stream.Errorf(path, 0, -1, "", stream.ErrFormat, "%v", err)
	}
	m, err := npy.AsMatrix(h)
	if err != nil {
		return nil, stream.Errorf(path, 0, -1, "", stream.ErrSchema, "%v", err)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if want := h.Bytes + m.Bytes(); st.Size() < want {
		return nil, stream.Errorf(path, 0, -1, "", stream.ErrCorrupt, "truncated: %d bytes, but the header's shape %v of %s needs %d", st.Size(), h.Shape, h.Descr, want)
	}
	if o.GroupColumn != "" {
		return nil, stream.Errorf(path, 0, -1, o.GroupColumn, stream.ErrSchema, "a .npy file holds one array and no id column; save the ids beside the samples: np.savez(path, x=X, %s=ids)", o.GroupColumn)
	}
	cols, err := Columns(o.Columns, m.D)
	if err != nil {
		return nil, stream.Errorf(path, 0, -1, "", stream.ErrSchema, "%v", err)
	}
	s := &Source{path: path, o: o, m: m, cols: cols}
	if s.stamp, err = stream.StampFile(path, nil); err != nil {
		return nil, err
	}
	width := m.D
	if cols != nil {
		width = len(cols)
	}
	s.info = stream.Info{Path: path, Format: Format, Layout: LayoutArray, Rows: m.N, NNZ: -1, Cols: width,
		Bytes: st.Size(), Schema: fmt.Sprintf("%s %v", h.Descr, h.Shape), Checksum: "none: a .npy file carries no checksum"}
	return s, nil
}

// Columns parses the column indices of an array of d columns, as
// Options.Columns names them; nil for none (every column).
func Columns(names []string, d int) ([]int, error) {
	if len(names) == 0 {
		return nil, nil
	}
	cols := make([]int, len(names))
	seen := map[int]bool{}
	for i, s := range names {
		c, err := strconv.Atoi(strings.TrimSpace(s))
		switch {
		case err != nil:
			return nil, fmt.Errorf("column %q: an array's columns are chosen by their 0-based index", s)
		case c < 0 || c >= d:
			return nil, fmt.Errorf("column %d: the array has columns 0..%d", c, d-1)
		case seen[c]:
			return nil, fmt.Errorf("column %d is chosen twice", c)
		}
		seen[c], cols[i] = true, c
	}
	return cols, nil
}

// Info describes the array: Rows samples of Cols features.
func (s *Source) Info() stream.Info { return s.info }

// Rows is one pass over the samples.
func (s *Source) Rows(ctx context.Context) iter.Seq2[*stream.Dense, error] {
	return stream.PassRows(func(yield func(*stream.Dense) bool) error {
		stopped := false
		err := s.pass(ctx, func(b *stream.Dense) bool {
			stopped = !yield(b)
			return !stopped
		})
		if err == nil && !stopped {
			// A file changed during the pass is an error at its end too.
			err = s.stamp.Check()
		}
		return err
	})
}

func (s *Source) pass(ctx context.Context, yield func(*stream.Dense) bool) error {
	if err := s.stamp.Check(); err != nil {
		return err
	}
	f, err := stream.OpenFile(s.path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	if _, err := npy.ReadHeader(r); err != nil {
		return stream.Errorf(s.path, 0, -1, "", stream.ErrCorrupt, "%v", err)
	}
	rows := npy.Rows{Path: s.path, M: s.m, R: r, Cols: s.cols, O: s.o}
	return rows.Each(ctx, yield)
}
