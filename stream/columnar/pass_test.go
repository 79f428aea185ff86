package columnar

import (
	"context"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// A pass over a lists or pairs table uses one fixed set of batches, the same
// whatever the file's length and the pass's timing: exactly
// ResultSlots(workers)+1 distinct batches reach a consumer that releases each
// before taking the next. A consumer that keeps every batch still gets the
// whole pass (the pass makes more batches instead of waiting for releases).
func TestPassUsesFixedBatches(t *testing.T) {
	docs := corpus(6000, 400, 20, 21)
	eachTable(t, docs, []string{LayoutLists, LayoutPairs}, stream.WriteOptions{Terms: 400, RowGroupRows: 700}, func(t *testing.T, k kind, layout, path string) {
		for _, workers := range []int{1, 2, 3} {
			src, err := stream.Open(path, stream.Options{BatchRows: 50, Workers: workers})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[*stream.Docs]bool{}
			arrays := map[*int32]bool{} // the batches' term arrays
			n := 0
			for b, err := range src.Docs(context.Background()) {
				if err != nil {
					t.Fatal(err)
				}
				seen[b] = true
				if cap(b.Terms) > 0 {
					arrays[&b.Terms[:1][0]] = true
				}
				n += b.Len()
				b.Release()
			}
			want := stream.ResultSlots(workers) + 1
			if n != docs.Len() || len(seen) != want {
				t.Fatalf("workers %d: %d documents in %d distinct batches, want %d in %d", workers, n, len(seen), docs.Len(), want)
			}
			// A batch may grow once or twice at first, not again with
			// every row group whose estimate is a little larger.
			if len(arrays) > 2*want {
				t.Errorf("workers %d: the %d batches used %d term arrays over %d row groups", workers, want, len(arrays), (docs.Len()+699)/700)
			}
		}
		src, err := stream.Open(path, stream.Options{BatchRows: 50, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		var kept []*stream.Docs
		got := &stream.Docs{Offsets: []int{0}}
		for b, err := range src.Docs(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			kept = append(kept, b)
		}
		for _, b := range kept {
			for i := range b.Len() {
				got.AppendDoc(b.Doc(i))
			}
			b.Release()
		}
		sameDocs(t, got, docs)
	})
}
