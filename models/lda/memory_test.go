package lda

import (
	"context"
	"slices"
	"testing"

	"github.com/streamfit/streamfit/stream/synth"
)

// TestMemoryIndependentOfDocs checks that the peak heap of a fit does not grow
// with the number of documents: every statistic is O(d·k + k³) and batches
// are released as they are consumed. 4× the documents must stay within 10%.
// Batches are small so that even the smaller corpus has many more batches
// than can be in flight at once, as in steady state on a large corpus.
func TestMemoryIndependentOfDocs(t *testing.T) {
	if testing.Short() {
		t.Skip("fits two corpora")
	}
	// The median of three runs damps the timing noise of GC cycles and pooled
	// batches, which is of the order of one batch.
	peak := func(docs int64) uint64 {
		src, _ := corpus(t, synth.LDAConfig{Docs: docs, Vocab: 20000, K: 20, Alpha0: 1, DocLen: 100, Seed: 5, BatchRows: 300})
		var p [3]uint64
		for i := range p {
			h := sampleHeap()
			_, err := Fit(context.Background(), src, Config{K: 20, Seed: 1})
			p[i] = h.Peak()
			if err != nil {
				t.Fatal(err)
			}
		}
		slices.Sort(p[:])
		return p[1]
	}
	small, large := peak(6000), peak(24000)
	ratio := float64(large) / float64(small)
	t.Logf("peak heap: %.1f MB at 6000 documents, %.1f MB at 24000 (ratio %.3f)", float64(small)/1e6, float64(large)/1e6, ratio)
	if ratio > 1.10 {
		t.Errorf("peak heap grew by a factor %.3f for 4× the documents (limit 1.10)", ratio)
	}
}
