package hmm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"testing"

	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// counted is a source that counts the passes over it.
type counted struct {
	*stream.MemoryDense
	reads int
}

func (c *counted) Rows(ctx context.Context) iter.Seq2[*stream.Dense, error] {
	c.reads++
	return c.MemoryDense.Rows(ctx)
}

// The passes after the first read the one-hot sequences from memory when
// they fit the budget, and give the model of passes that all read the
// source, bit for bit, whatever the workers and the symbols' width; above
// the budget, or at a row that is not one-hot, every pass reads the source.
func TestBaumWelchInMemory(t *testing.T) {
	ctx := context.Background()
	const passes = 6
	for _, d := range []int{6, 300} { // a byte per symbol, two
		mem, truth := generated(t, synth.HMMSeqConfig{Seqs: 120, Len: 15, K: 3, D: d, Discrete: true, Seed: 4}, 77)
		start := hmm.Start(truth, hmm.BWConfig{})
		fit := func(src *stream.MemoryDense, cfg hmm.BWConfig) ([]byte, int) {
			t.Helper()
			c := &counted{MemoryDense: src}
			cfg.Passes, cfg.Tol = passes, -1
			r, err := hmm.Refine(ctx, c, start, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if r.BW.Passes != passes {
				t.Fatalf("d=%d: %d passes", d, r.BW.Passes)
			}
			b, _ := json.Marshal(r)
			return b, c.reads
		}
		streamed, reads := fit(mem, hmm.BWConfig{Memory: -1})
		if reads != passes {
			t.Fatalf("d=%d, no memory: %d reads of the source in %d passes", d, reads, passes)
		}
		for _, w := range []int{1, 3} {
			got, reads := fit(mem, hmm.BWConfig{Workers: w})
			if reads != 1 {
				t.Fatalf("d=%d, %d workers: %d reads of the source, want 1", d, w, reads)
			}
			if !bytes.Equal(got, streamed) {
				t.Fatalf("d=%d, %d workers: the passes from memory give another model", d, w)
			}
		}
		// 1800 rows of 1 or 2 bytes and 120 sequences: not within 2000 bytes.
		got, reads := fit(mem, hmm.BWConfig{Memory: 2000})
		if reads != passes || !bytes.Equal(got, streamed) {
			t.Fatalf("d=%d, above the budget: %d reads (want %d), same model %v", d, reads, passes, bytes.Equal(got, streamed))
		}
		// A row of value 2: not one-hot, so not held.
		data := append([]float64(nil), mem.All.Data...)
		for u := range d {
			data[5*d+u] *= 2
		}
		all := *mem.All
		all.Data = data
		two := &stream.MemoryDense{All: &all, BatchRows: 77}
		want, _ := fit(two, hmm.BWConfig{Memory: -1})
		got, reads = fit(two, hmm.BWConfig{})
		if reads != passes || !bytes.Equal(got, want) {
			t.Fatalf("d=%d, a row not one-hot: %d reads (want %d), same model %v", d, reads, passes, bytes.Equal(got, want))
		}
	}
}
