package lda

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// Spec is a generated LDA corpus: the model of synth.LDAConfig plus the file
// it is written to.
type Spec struct {
	Docs   int64
	Vocab  int
	K      int
	Alpha0 float64
	DocLen float64
	Seed   uint64
	// Format is "parquet" or "docword" (plain text).
	Format string
	// RowGroup is the documents per Parquet row group (0: the writer's default).
	RowGroup int
}

// CorpusM is corpus M of issue 3: 200,000 documents of mean length 200 over
// a vocabulary of 10,000 words from 50 topics with α₀ = 1 (≈38M non-zeros).
var CorpusM = Spec{Docs: 200000, Vocab: 10000, K: 50, Alpha0: 1, DocLen: 200, Seed: 7, Format: "parquet"}

// With returns s with n documents.
func (s Spec) With(n int64) Spec { s.Docs = n; return s }

// In returns s in another file format.
func (s Spec) In(format string) Spec { s.Format = format; return s }

// name is the file name of the corpus, which encodes every parameter so a
// cached file is only reused for the same corpus.
func (s Spec) name() string {
	base := fmt.Sprintf("lda-n%d-d%d-k%d-a%g-l%g-s%d", s.Docs, s.Vocab, s.K, s.Alpha0, s.DocLen, s.Seed)
	switch s.Format {
	case "docword":
		return "docword." + base + ".txt"
	default:
		return fmt.Sprintf("%s-g%d.parquet", base, s.RowGroup)
	}
}

// Dir is where corpora are cached: $STREAMFIT_BENCH_DIR, else the system
// temporary directory.
func Dir() string {
	if d := os.Getenv("STREAMFIT_BENCH_DIR"); d != "" {
		return d
	}
	return os.TempDir()
}

// Ensure generates the corpus of s under Dir unless it is already there and
// returns the paths of the data and of its truth file. Files are written
// atomically, so an interrupted generation is redone on the next call.
func Ensure(ctx context.Context, s Spec) (data, truth string, err error) {
	dir := filepath.Join(Dir(), "streamfit-bench-lda")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	data = filepath.Join(dir, s.name())
	truth = filepath.Join(dir, fmt.Sprintf("truth-n%d-d%d-k%d-a%g-l%g-s%d.json", s.Docs, s.Vocab, s.K, s.Alpha0, s.DocLen, s.Seed))
	_, errData := os.Stat(data)
	_, errTruth := os.Stat(truth)
	if errData == nil && errTruth == nil {
		return data, truth, nil
	}
	c, err := synth.NewLDA(synth.LDAConfig{Docs: s.Docs, Vocab: s.Vocab, K: s.K, Alpha0: s.Alpha0, DocLen: s.DocLen, Seed: s.Seed})
	if err != nil {
		return "", "", err
	}
	if errData != nil {
		if err := write(ctx, c, data, stream.WriteOptions{Terms: s.Vocab, RowGroupRows: s.RowGroup}); err != nil {
			return "", "", err
		}
	}
	if errTruth != nil {
		if err := c.WriteTruth(truth); err != nil {
			return "", "", err
		}
	}
	return data, truth, nil
}

func write(ctx context.Context, src stream.DocSource, path string, o stream.WriteOptions) error {
	w, err := stream.Create(path, o)
	if err != nil {
		return err
	}
	for b, err := range src.Docs(ctx) {
		if err == nil {
			err = w.Write(b)
		}
		if err != nil {
			w.Abort()
			return fmt.Errorf("%s: %w", path, err)
		}
		b.Release()
	}
	return w.Close()
}
