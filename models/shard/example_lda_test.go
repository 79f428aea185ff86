package shard_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/models/shard"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// Fit an LDA model shard by shard, as `streamfit stats` and `merge` do:
// each phase runs over two halves of a corpus file, writes a statistics
// file per half, and merges them; the next phase takes the merged file's
// basis, and the model is fitted from the merged phase-2 statistics.
func ExampleLDA_Stats() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "docs.parquet")
	corpus, err := synth.NewLDA(synth.LDAConfig{Docs: 4000, Vocab: 300, K: 3, Alpha0: 1, DocLen: 80, Seed: 1})
	if err != nil {
		panic(err)
	}
	w, err := stream.Create(path, stream.WriteOptions{})
	if err != nil {
		panic(err)
	}
	for b, err := range corpus.Docs(ctx) {
		if err != nil {
			panic(err)
		}
		if err := w.Write(b); err != nil {
			panic(err)
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}

	wf := shard.LDA{Config: lda.Config{K: 3, Alpha0: 1, Seed: 1}}
	halves := []shard.Part{{Path: path, Rows: &[2]int64{0, 2000}}, {Path: path, Rows: &[2]int64{2000, -1}}}
	var basis *implicit.TopicStats
	for _, phase := range []shard.Phase{shard.Phase1, shard.Phase2} {
		var files []string
		for i, part := range halves {
			st, err := wf.Stats(ctx, []shard.Part{part}, stream.Options{}, phase, basis)
			if err != nil {
				panic(err)
			}
			file := filepath.Join(dir, fmt.Sprintf("phase%s.%d.stats", phase, i))
			if err := implicit.WriteTopicStats(ctx, file, st); err != nil {
				panic(err)
			}
			files = append(files, file)
		}
		if basis, err = shard.MergeStatsFiles(ctx, files); err != nil {
			panic(err)
		}
		fmt.Printf("phase %s: %d shards covering %d inputs\n", phase, basis.Header.Shards, len(basis.Header.Inputs))
	}
	m, err := wf.Fit(ctx, basis)
	if err != nil {
		panic(err)
	}
	tr := corpus.Truth
	ev, err := models.Evaluate(m, &models.Model{K: tr.K, D: tr.D, Alpha: tr.Alpha, Topics: tr.Topics})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d topics over %d words from %d documents; %d of 3 recovered within ℓ1 %.1f\n", m.K, m.D, m.Fit.Docs, ev.Found, models.FoundL1)
	// Output:
	// phase 1: 2 shards covering 2 inputs
	// phase 2: 2 shards covering 2 inputs
	// 3 topics over 300 words from 4000 documents; 3 of 3 recovered within ℓ1 0.5
}
