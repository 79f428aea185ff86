package lda_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// Fit from statistics computed shard by shard and merged: each phase is one
// pass over every shard, whose statistics add up. Shards cut where the whole
// corpus's batches are give the model of the whole corpus bit for bit.
func ExampleFitStats() {
	ctx := context.Background()
	corpus, err := synth.NewLDA(synth.LDAConfig{Docs: 5000, Themes: synth.Themes, K: 3, DocLen: 100, Seed: 1})
	if err != nil {
		panic(err)
	}
	all, err := stream.Collect(ctx, corpus)
	if err != nil {
		panic(err)
	}
	info := corpus.Info()
	part := func(lo, hi int) stream.DocSource {
		b := stream.NewDocs(int64(lo))
		for i := lo; i < hi; i++ {
			b.AppendDoc(all.Doc(i))
		}
		return &stream.MemoryDocs{All: b, Terms: info.Terms, Vocab: info.Vocab, BatchRows: 1000}
	}
	shards := []stream.DocSource{part(0, 2000), part(2000, 5000)}
	cfg := lda.Config{K: 3, Alpha0: 1, Seed: 1}

	// merged runs one phase over every shard and adds up the statistics.
	merged := func(phase func(stream.DocSource) (*implicit.TopicStats, error)) *implicit.TopicStats {
		var sum *implicit.TopicStats
		for _, shard := range shards {
			st, err := phase(shard)
			if err != nil {
				panic(err)
			}
			if sum == nil {
				sum = st
			} else if err := sum.Merge(st); err != nil {
				panic(err)
			}
		}
		return sum
	}
	p1 := merged(func(src stream.DocSource) (*implicit.TopicStats, error) { return lda.Phase1Stats(ctx, src, cfg) })
	p2 := merged(func(src stream.DocSource) (*implicit.TopicStats, error) { return lda.Phase2Stats(ctx, src, p1, cfg) })
	m, err := lda.FitStats(ctx, p2, cfg)
	if err != nil {
		panic(err)
	}

	// The same phases over the whole corpus at once.
	whole := part(0, 5000)
	w1, err := lda.Phase1Stats(ctx, whole, cfg)
	if err != nil {
		panic(err)
	}
	w2, err := lda.Phase2Stats(ctx, whole, w1, cfg)
	if err != nil {
		panic(err)
	}
	one, err := lda.FitStats(ctx, w2, cfg)
	if err != nil {
		panic(err)
	}
	same := slices.Equal(m.Alpha, one.Alpha)
	for t := range m.Topics {
		same = same && slices.Equal(m.Topics[t], one.Topics[t])
	}
	fmt.Println("from", m.Fit.Docs, "documents in two shards; the same model as from one:", same)
	// Output: from 5000 documents in two shards; the same model as from one: true
}
