package npz

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/streamfit/streamfit/internal/npy"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/ndarray"
)

// LayoutArray is the layout (stream.Info.Layout) of dense samples read
// from a member of an .npz file.
const LayoutArray = "array"

// Dense is an array of an .npz file (np.savez or np.savez_compressed)
// opened as dense samples: a member of shape (samples, features), and
// optionally a member of one integer id per row (a set or sequence id).
// Every pass reopens the file and inflates the members side by side, a
// batch of rows at a time.
type Dense struct {
	path        string
	o           stream.Options
	values, ids string // member names, without ".npy"
	m           npy.Matrix
	idh         npy.Header
	cols        []int
	info        stream.Info
	stamp       stream.Stamp
}

// OpenDense opens the samples of the .npz file at path: the member named
// o.ValuesColumn ("x" for np.savez(path, x=X)), or else the file's only
// array of two dimensions; o.GroupColumn names a member of ids, one per
// row; o.Columns chooses columns by their 0-based index.
func OpenDense(path string, o stream.Options) (*Dense, error) {
	o = o.WithDefaults()
	z, err := openZip(path)
	if err != nil {
		if e := truncated(path); e != nil {
			return nil, e
		}
		return nil, stream.Errorf(path, 0, -1, "", stream.ErrFormat, "not a .npz (zip) file: %v", err)
	}
	defer z.Close()
	if find(z.Reader, "format.npy") != nil && find(z.Reader, "indptr.npy") != nil {
		return nil, stream.Errorf(path, 0, -1, "", stream.ErrSchema, "a sparse matrix (scipy.sparse.save_npz): documents, not dense samples; save dense samples with np.savez(path, x=X)")
	}
	headers := map[string]npy.Header{}
	var names []string
	for _, f := range z.File {
		name, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok {
			continue
		}
		rc, h, err := openMember(z.Reader, path, f.Name)
		if err != nil {
			return nil, err
		}
		rc.Close()
		headers[name] = h
		names = append(names, name)
	}
	s := &Dense{path: path, o: o, values: o.ValuesColumn, ids: o.GroupColumn}
	if s.values == "" {
		var two []string
		for _, n := range names {
			if h := headers[n]; len(h.Shape) == 2 && n != s.ids {
				two = append(two, n)
			}
		}
		switch len(two) {
		case 1:
			s.values = two[0]
		case 0:
			return nil, stream.Errorf(path, 0, -1, "", stream.ErrSchema, "no array of shape (samples, features) among the members %s", strings.Join(names, ", "))
		default:
			return nil, stream.Errorf(path, 0, -1, "", stream.ErrSchema, "several arrays of shape (samples, features): %s; name the one to read as the values column", strings.Join(two, ", "))
		}
	}
	h, ok := headers[s.values]
	if !ok {
		return nil, stream.Errorf(path, 0, -1, s.values, stream.ErrSchema, "no member %q; the file holds %s", s.values, strings.Join(names, ", "))
	}
	if s.m, err = npy.AsMatrix(h); err != nil {
		return nil, stream.Errorf(path, 0, -1, s.values, stream.ErrSchema, "%v", err)
	}
	if err := checkSize(z.Reader, path, s.values, h.Bytes+s.m.Bytes()); err != nil {
		return nil, err
	}
	if s.ids != "" {
		idh, ok := headers[s.ids]
		if !ok {
			return nil, stream.Errorf(path, 0, -1, s.ids, stream.ErrSchema, "no id member %q; the file holds %s", s.ids, strings.Join(names, ", "))
		}
		if err := npy.AsIDs(idh, s.m.N); err != nil {
			return nil, stream.Errorf(path, 0, -1, s.ids, stream.ErrSchema, "%v", err)
		}
		if err := checkSize(z.Reader, path, s.ids, idh.Bytes+s.m.N*int64(idh.Size)); err != nil {
			return nil, err
		}
		s.idh = idh
	}
	if s.cols, err = ndarray.Columns(o.Columns, s.m.D); err != nil {
		return nil, stream.Errorf(path, 0, -1, s.values, stream.ErrSchema, "%v", err)
	}
	if s.stamp, err = stream.StampFile(path, nil); err != nil {
		return nil, err
	}
	width := s.m.D
	if s.cols != nil {
		width = len(s.cols)
	}
	s.info = stream.Info{Path: path, Format: Format, Layout: LayoutArray, Rows: s.m.N, NNZ: -1, Cols: width,
		Schema:   fmt.Sprintf("%s: %s %v", s.values, h.Descr, h.Shape),
		Checksum: "CRC-32 of each member (zip), checked at the end of a pass"}
	if st, err := stream.StatFile(path); err == nil {
		s.info.Bytes = st.Size()
	}
	return s, nil
}

// checkSize refuses a member whose uncompressed size is less than its
// header's shape needs.
func checkSize(z *zip.Reader, path, name string, want int64) error {
	if f := find(z, name+".npy"); f != nil && f.UncompressedSize64 < uint64(want) {
		return stream.Errorf(path, 0, -1, name, stream.ErrCorrupt, "the member holds %d bytes, but its header's shape needs %d", f.UncompressedSize64, want)
	}
	return nil
}

// Info describes the samples: Rows samples of Cols features.
func (s *Dense) Info() stream.Info { return s.info }

// Rows is one pass over the samples.
func (s *Dense) Rows(ctx context.Context) iter.Seq2[*stream.Dense, error] {
	return stream.PassRows(func(yield func(*stream.Dense) bool) error { return s.pass(ctx, yield) })
}

func (s *Dense) pass(ctx context.Context, yield func(*stream.Dense) bool) error {
	if err := s.stamp.Check(); err != nil {
		return err
	}
	z, err := openZip(s.path)
	if err != nil {
		return stream.Errorf(s.path, 0, -1, "", stream.ErrCorrupt, "%v", err)
	}
	defer z.Close()
	members := []string{s.values}
	rc, _, err := openMember(z.Reader, s.path, s.values+".npy")
	if err != nil {
		return err
	}
	defer rc.Close()
	rows := npy.Rows{Path: s.path, Member: s.values, M: s.m, R: rc, Cols: s.cols, O: s.o}
	readers := []io.Reader{rc}
	if s.ids != "" {
		ic, _, err := openMember(z.Reader, s.path, s.ids+".npy")
		if err != nil {
			return err
		}
		defer ic.Close()
		rows.IDs, rows.IDHeader, rows.IDMember = ic, s.idh, s.ids
		members = append(members, s.ids)
		readers = append(readers, ic)
	}
	stopped := false
	if err := rows.Each(ctx, func(b *stream.Dense) bool {
		stopped = !yield(b)
		return !stopped
	}); err != nil || stopped {
		return err
	}
	// Each member read to its end: archive/zip then checks its CRC-32.
	for i, r := range readers {
		if _, err := io.Copy(io.Discard, r); err != nil {
			if errors.Is(err, zip.ErrChecksum) {
				return stream.Errorf(s.path, 0, -1, members[i], stream.ErrCorrupt, "the member's data does not match its CRC-32: the file is damaged")
			}
			return stream.Errorf(s.path, 0, -1, members[i], stream.ErrCorrupt, "%v", err)
		}
	}
	return s.stamp.Check()
}
