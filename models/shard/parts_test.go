package shard

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

func end64(hi int64) int64 {
	if hi < 0 {
		return 1 << 62
	}
	return hi
}

// docRange and denseRange yield exactly the documents (rows) of their
// range, for ranges that cut batches, with the rows' indexes in the file.
func TestRanges(t *testing.T) {
	ctx := context.Background()
	c, err := synth.NewLDA(synth.LDAConfig{Docs: 1000, Vocab: 50, K: 3, Alpha0: 1, DocLen: 10, Seed: 4, BatchRows: 97})
	if err != nil {
		t.Fatal(err)
	}
	all, err := stream.Collect(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	g, err := synth.NewGMM(synth.GMMConfig{Rows: 1000, D: 3, K: 2, Seed: 4, BatchRows: 97})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := stream.CollectDense(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	// A range not within the rows is an error, not clipped to the rows there are.
	for _, r := range [][2]int64{{150, 1234}, {1000, -1}, {1000, 1001}} {
		if _, err := stream.Collect(ctx, docRange{src: c, r: r}); err == nil || !strings.Contains(err.Error(), "has 1000 documents") {
			t.Errorf("range %v of 1000 documents: %v", r, err)
		}
		if _, err := stream.CollectDense(ctx, denseRange{src: g, r: r}); err == nil || !strings.Contains(err.Error(), "has 1000 rows") {
			t.Errorf("range %v of 1000 rows: %v", r, err)
		}
	}
	for _, r := range [][2]int64{{0, -1}, {150, 1000}, {97, 194}, {990, -1}, {5, 6}} {
		src := docRange{src: c, r: r}
		got, err := stream.Collect(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		hi := min(int64(all.Len()), end64(r[1]))
		if int64(got.Len()) != hi-r[0] || src.Info().Rows != hi-r[0] {
			t.Fatalf("range %v: %d documents (Info %d), want %d", r, got.Len(), src.Info().Rows, hi-r[0])
		}
		for i := range got.Len() {
			gt, gc := got.Doc(i)
			wt, wc := all.Doc(int(r[0]) + i)
			if !slices.Equal(gt, wt) || !slices.Equal(gc, wc) {
				t.Fatalf("range %v: document %d differs", r, r[0]+int64(i))
			}
		}
		dr := denseRange{src: g, r: r}
		var n int64
		for b, err := range dr.Rows(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			for i := range b.Rows {
				if !slices.Equal(b.Row(i), rows.Row(int(b.Start)+i)) || b.Start+int64(i) != r[0]+n {
					t.Fatalf("range %v: row %d differs", r, b.Start+int64(i))
				}
				n++
			}
			b.Release()
		}
		if n != hi-r[0] || dr.Info().Rows != hi-r[0] {
			t.Fatalf("range %v: %d rows (Info %d), want %d", r, n, dr.Info().Rows, hi-r[0])
		}
	}
}
