package text

import (
	"bytes"
	"context"
	"iter"
	"os"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/streamfit/streamfit/stream"
)

// memTexts is a TextSource over strings held in memory.
type memTexts struct {
	docs  []string
	batch int
}

func (m *memTexts) Info() stream.Info {
	return stream.Info{Format: "memory", Layout: "text", Rows: int64(len(m.docs)), NNZ: -1}
}

func (m *memTexts) Texts(ctx context.Context) iter.Seq2[*stream.Texts, error] {
	return func(yield func(*stream.Texts, error) bool) {
		for lo := 0; lo < len(m.docs); lo += m.batch {
			hi := min(lo+m.batch, len(m.docs))
			if !yield(&stream.Texts{Start: int64(lo), Text: m.docs[lo:hi]}, nil) {
				return
			}
		}
	}
}

// compress returns data compressed as kind ("", "gzip" or "zstd").
func compress(t testing.TB, kind string, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch kind {
	case "":
		return data
	case "gzip":
		w := gzip.NewWriter(&buf)
		w.Write(data)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	case "zstd":
		w, err := zstd.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// collectTexts reads one pass, checking that batches are contiguous.
func collectTexts(t testing.TB, src stream.TextSource) ([]string, error) {
	t.Helper()
	var all []string
	for b, err := range src.Texts(context.Background()) {
		if err != nil {
			return all, err
		}
		if b.Start != int64(len(all)) {
			t.Fatalf("batch starts at %d after %d documents", b.Start, len(all))
		}
		all = append(all, b.Text...)
	}
	return all, nil
}
