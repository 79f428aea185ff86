package docword

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// FuzzParse feeds arbitrary files to the reader: it must not panic, every
// failure must be a positioned *stream.Error of a known kind, and whatever
// parses must come back unchanged through the writer. Seeds live in
// testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add([]byte("2\n4\n3\n1 1 2\n1 4 1\n2 2 7\n"))
	f.Add([]byte("%%MatrixMarket matrix coordinate real general\n% gensim\n3 4 3        \n1 1 2.0\n1 4 1\n3 2 7.00\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "in.docword")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := Open(path, stream.Options{Workers: 2, BatchRows: 3})
		if err != nil {
			checkKnown(t, err)
			return
		}
		if src.Info().Rows > 1<<16 {
			t.Skip("too many (empty) documents to be worth a round trip")
		}
		src.chunk = 16 // cut documents across chunks as often as possible
		all, err := stream.Collect(context.Background(), src)
		if err != nil {
			checkKnown(t, err)
			return
		}
		info := src.Info()
		if int64(all.Len()) != info.Rows {
			t.Fatalf("%d documents, header says %d", all.Len(), info.Rows)
		}
		if err := all.Validate(info.Terms); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out.docword")
		w, err := Create(out, stream.WriteOptions{Terms: info.Terms})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(all); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		back, src2, err := readAll(out, stream.Options{}, 0)
		if err != nil {
			t.Fatalf("re-reading what was written: %v", err)
		}
		if src2.Info().Terms != info.Terms || !slices.Equal(back.Offsets, all.Offsets) || !slices.Equal(back.Terms, all.Terms) || !slices.Equal(back.Counts, all.Counts) {
			t.Fatal("round trip through the writer changed the corpus")
		}
	})
}

func checkKnown(t *testing.T, err error) {
	t.Helper()
	var se *stream.Error
	if !errors.As(err, &se) || (se.Line < 1 && se.Offset < 1) { // a line, or the byte of damaged compressed data
		t.Fatalf("error without a position: %v", err)
	}
	for _, k := range []error{stream.ErrEmpty, stream.ErrCorrupt, stream.ErrValue, stream.ErrOrder, stream.ErrFormat} {
		if errors.Is(err, k) {
			return
		}
	}
	t.Fatalf("error of no known kind: %v", err)
}
