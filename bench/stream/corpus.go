package stream

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/streamfit/streamfit/stream"
	_ "github.com/streamfit/streamfit/stream/formats"
	"github.com/streamfit/streamfit/stream/synth"
)

// Corpus parameters: with these, documents average about 78 distinct words.
const (
	benchVocab  = 10000
	benchK      = 20
	benchDocLen = 100
)

// files names the corpus file of each benchmarked format.
var files = []struct{ name, file string }{
	{"docword", "docword.bench.txt"},
	{"docword-zst", "docword.bench.txt.zst"},
	{"docword-gz", "docword.bench.txt.gz"},
	{"parquet-zstd", "bench.parquet"},
	{"arrow", "bench.arrow"},
	{"arrow-stream", "bench.arrows"},
}

func benchDocs() int64 {
	if s := os.Getenv("STREAMFIT_BENCH_DOCS"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 1_000_000
}

// corpusDir generates (once) the corpus of n documents in every format and
// returns its directory. The files are written as `streamfit gen lda` writes
// them: default writer options (row groups and record batches by size).
func corpusDir(n int64) (string, error) {
	base := os.Getenv("STREAMFIT_BENCH_DIR")
	if base == "" {
		base = os.TempDir()
	}
	dir := filepath.Join(base, fmt.Sprintf("streamfit-bench-%d-%d-%d-%d", n, benchVocab, benchK, benchDocLen))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, f := range files {
		path := filepath.Join(dir, f.file)
		if _, err := os.Stat(path); err == nil {
			continue
		}
		if err := generate(path, n); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func generate(path string, n int64) error {
	c, err := synth.NewLDA(synth.LDAConfig{Docs: n, Vocab: benchVocab, K: benchK, DocLen: benchDocLen, Seed: 1})
	if err != nil {
		return err
	}
	w, err := stream.Create(path, stream.WriteOptions{Terms: benchVocab})
	if err != nil {
		return err
	}
	for b, err := range c.Docs(context.Background()) {
		if err == nil {
			err = w.Write(b)
		}
		if err != nil {
			w.Abort()
			return err
		}
		b.Release()
	}
	return w.Close()
}

// pass reads src once and returns documents and nnz.
func pass(ctx context.Context, src stream.DocSource) (docs, nnz int64, err error) {
	for b, err := range src.Docs(ctx) {
		if err != nil {
			return 0, 0, err
		}
		docs += int64(b.Len())
		nnz += int64(b.NNZ())
		b.Release()
	}
	return docs, nnz, nil
}
