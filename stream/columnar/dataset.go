package columnar

import (
	"context"
	"fmt"
	"io/fs"
	"iter"
	"path/filepath"
	"slices"
	"strings"

	"github.com/streamfit/streamfit/stream"
)

// FormatDataset names a directory of Parquet (or Arrow IPC) files read as
// one source: the layout Spark, DuckDB, pandas and Arrow write a large
// table in (part-00000.parquet, part-00001.parquet, …, possibly in
// partition subdirectories such as year=2024/).
const FormatDataset = "dataset"

func init() {
	stream.Register(stream.Format{
		Name:  FormatDataset,
		Match: matchDataset,
		OpenDocs: func(p string, o stream.Options) (stream.DocSource, error) {
			s, err := openDataset[stream.DocSource, *stream.Docs](p, o, openDocs)
			if err != nil {
				return nil, err
			}
			return datasetDocs{s}, nil
		},
		OpenDense: func(p string, o stream.Options) (stream.DenseSource, error) {
			s, err := openDataset[stream.DenseSource, *stream.Dense](p, o, openDense)
			if err != nil {
				return nil, err
			}
			return datasetDense{s}, nil
		},
		OpenTexts: func(p string, o stream.Options) (stream.TextSource, error) {
			s, err := openDataset[stream.TextSource, *stream.Texts](p, o, openTexts)
			if err != nil {
				return nil, err
			}
			return datasetTexts{s}, nil
		},
	})
}

// datasetKind returns the container format a dataset file's name says, if
// any.
func datasetKind(name string) (kind, bool) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".parquet", ".pq":
		return kindParquet, true
	case ".arrow", ".feather", ".ipc":
		return kindArrow, true
	case ".arrows":
		return kindStream, true
	}
	return 0, false
}

// DatasetFiles lists the files of the dataset directory dir in the order
// a dataset input reads them (see datasetParts), for tools that take the
// files one by one (the Beam pipeline's work units).
func DatasetFiles(dir string) ([]string, error) {
	files, _, err := datasetParts(dir)
	return files, err
}

// datasetParts lists the files of the dataset directory dir in the order a
// dataset input reads them, and their container format: an error names a
// file that is not named as Parquet or Arrow, or of another format than
// the first, and a directory with none.
func datasetParts(dir string) ([]string, kind, error) {
	var files []string
	err := walkDataset(dir, func(p string) error {
		files = append(files, p)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if len(files) == 0 {
		return nil, 0, stream.Errorf(dir, 0, -1, "", stream.ErrEmpty, "holds no dataset file (names starting with . or _ are left out)")
	}
	var k kind
	for i, f := range files {
		fk, ok := datasetKind(f)
		if !ok {
			return nil, 0, stream.Errorf(f, 0, -1, "", stream.ErrFormat, "is not named as a Parquet or Arrow file: a dataset directory holds files of one format (--format text-dir reads the directory as raw text files)")
		}
		if i == 0 {
			k = fk
		} else if fk != k {
			return nil, 0, stream.Errorf(f, 0, -1, "", stream.ErrFormat, "is %s, but %s is %s: a dataset directory holds files of one format", fk, files[0], k)
		}
	}
	return files, k, nil
}

// walkDataset calls fn for each file of the dataset directory dir, depth
// first, each directory's entries sorted by name, leaving out names that
// start with "." or "_" (.crc checksums, _SUCCESS markers, _metadata
// summaries, hidden files), as Spark and Arrow do.
func walkDataset(dir string, fn func(path string) error) error {
	skip := func(name string) bool { return stream.Hidden(name) || strings.HasPrefix(name, "_") }
	return stream.WalkFiles(context.Background(), dir, skip, func(p string, _ fs.FileInfo) error { return fn(p) })
}

// matchDataset claims a directory holding a file named as Parquet or Arrow
// (3: above a directory of text files, which any directory could be). The
// walk stops at the first such file. A directory whose only such files are
// left out (names starting with "." or "_", such as the hidden parts of a
// write that did not finish) and that holds nothing else but hidden files
// is claimed too, so that opening it says it holds no dataset file instead
// of reading its "_SUCCESS" marker as text.
func matchDataset(path string, head []byte) int {
	if head != nil {
		return 0
	}
	if st, err := stream.StatFile(path); err != nil || !st.IsDir() {
		return 0
	}
	var hidden, other bool
	found := false
	stream.WalkFiles(context.Background(), path, func(string) bool { return false }, func(p string, _ fs.FileInfo) error {
		_, data := datasetKind(p)
		left := leftOut(p, path)
		switch {
		case data && !left:
			found = true
			return fs.SkipAll
		case data:
			hidden = true
		case !left:
			other = true
		}
		return nil
	})
	if found || hidden && !other {
		return 3
	}
	return 0
}

// leftOut reports whether a dataset read leaves p, a file under dir, out:
// it or a directory above it has a name beginning with "." or "_".
func leftOut(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return false
	}
	for _, name := range strings.Split(filepath.ToSlash(rel), "/") {
		if stream.Hidden(name) || strings.HasPrefix(name, "_") {
			return true
		}
	}
	return false
}

// datasetSource is the files of a dataset directory read one after the
// other as one source of batches B (documents, dense rows or texts).
type datasetSource[S interface{ Info() stream.Info }, B any] struct {
	parts []S
	info  stream.Info
}

// openDataset opens every file of the dataset at dir with open, which
// checks each file's schema, and requires one container format and, for
// documents, the same vocabulary in all of them.
func openDataset[S interface{ Info() stream.Info }, B any](dir string, o stream.Options, open func(string, kind, stream.Options) (S, error)) (*datasetSource[S, B], error) {
	files, k, err := datasetParts(dir)
	if err != nil {
		return nil, err
	}
	s := &datasetSource[S, B]{}
	var schema string
	for i, f := range files {
		p, err := open(f, k, o)
		if err != nil {
			return nil, err
		}
		in := p.Info()
		if i == 0 {
			s.info = stream.Info{Path: dir, Format: FormatDataset, Layout: in.Layout, Terms: in.Terms, Vocab: in.Vocab, Cols: in.Cols}
			schema = in.Schema
		} else if err := sameDataset(f, files[0], in, s.info); err != nil {
			return nil, err
		}
		s.info.Rows = sumKnown(s.info.Rows, in.Rows, i)
		s.info.NNZ = sumKnown(s.info.NNZ, in.NNZ, i)
		s.info.Bytes += in.Bytes
		s.parts = append(s.parts, p)
	}
	s.info.Schema = fmt.Sprintf("%d %s files; %s: %s", len(files), k, files[0], schema)
	return s, nil
}

// sumKnown adds a part's count n to the total of the parts before it (the
// first when i is 0), −1 when either is unknown.
func sumKnown(total, n int64, i int) int64 {
	if i == 0 {
		return n
	}
	if total < 0 || n < 0 {
		return -1
	}
	return total + n
}

// sameDataset refuses a file whose vocabulary or width differs from the
// first file's.
func sameDataset(f, first string, in, want stream.Info) error {
	switch {
	case in.Terms != want.Terms:
		return stream.Errorf(f, 0, -1, "", stream.ErrSchema, "has a vocabulary of %d words, %s of %d: the files of a dataset share one", in.Terms, first, want.Terms)
	case (in.Vocab == nil) != (want.Vocab == nil) || !slices.Equal(in.Vocab, want.Vocab):
		return stream.Errorf(f, 0, -1, "", stream.ErrSchema, "has another vocabulary than %s: the files of a dataset share one (or give --vocab)", first)
	case in.Cols != want.Cols:
		return stream.Errorf(f, 0, -1, "", stream.ErrSchema, "has %d columns, %s %d", in.Cols, first, want.Cols)
	}
	return nil
}

// Info describes the whole dataset: the first file's layout and
// vocabulary, the files' rows, entries and bytes added up.
func (s *datasetSource[S, B]) Info() stream.Info { return s.info }

// Close closes the files' sources.
func (s *datasetSource[S, B]) Close() error {
	var first error
	for _, p := range s.parts {
		if err := stream.Close(p); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// pass reads the parts in order, numbering their batches on from the
// batches of the parts before: seq is one part's pass, start the index
// field of a batch and n its length.
func (s *datasetSource[S, B]) pass(ctx context.Context, seq func(S) iter.Seq2[B, error], start func(B) *int64, n func(B) int) iter.Seq2[B, error] {
	return func(yield func(B, error) bool) {
		var offset int64
		for _, p := range s.parts {
			var rows int64
			for b, err := range seq(p) {
				if err != nil {
					yield(b, err)
					return
				}
				*start(b) += offset
				rows = *start(b) - offset + int64(n(b))
				if !yield(b, nil) {
					return
				}
			}
			if ctx.Err() != nil {
				return
			}
			offset += rows
		}
	}
}

// datasetDocs, datasetDense and datasetTexts are the dataset sources of
// each kind of batch.
type (
	datasetDocs struct {
		*datasetSource[stream.DocSource, *stream.Docs]
	}
	datasetDense struct {
		*datasetSource[stream.DenseSource, *stream.Dense]
	}
	datasetTexts struct {
		*datasetSource[stream.TextSource, *stream.Texts]
	}
)

// Docs is one pass over the files' documents, in file order.
func (s datasetDocs) Docs(ctx context.Context) iter.Seq2[*stream.Docs, error] {
	return s.pass(ctx, func(p stream.DocSource) iter.Seq2[*stream.Docs, error] { return p.Docs(ctx) },
		func(b *stream.Docs) *int64 { return &b.Start }, (*stream.Docs).Len)
}

// Rows is one pass over the files' rows, in file order.
func (s datasetDense) Rows(ctx context.Context) iter.Seq2[*stream.Dense, error] {
	return s.pass(ctx, func(p stream.DenseSource) iter.Seq2[*stream.Dense, error] { return p.Rows(ctx) },
		func(b *stream.Dense) *int64 { return &b.Start }, func(b *stream.Dense) int { return b.Rows })
}

// Texts is one pass over the files' texts, in file order.
func (s datasetTexts) Texts(ctx context.Context) iter.Seq2[*stream.Texts, error] {
	return s.pass(ctx, func(p stream.TextSource) iter.Seq2[*stream.Texts, error] { return p.Texts(ctx) },
		func(b *stream.Texts) *int64 { return &b.Start }, func(b *stream.Texts) int { return len(b.Text) })
}
