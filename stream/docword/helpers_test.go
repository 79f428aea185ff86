package docword

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/streamfit/streamfit/stream"
)

// randomCorpus makes n documents over w terms with distinct terms in random
// order; about a fifth are empty, so the file skips their ids.
func randomCorpus(rng *rand.Rand, n, w, meanLen int) *stream.Docs {
	all := &stream.Docs{Offsets: []int{0}}
	seen := make([]bool, w)
	for range n {
		if rng.IntN(5) == 0 {
			all.EndDoc()
			continue
		}
		k := min(1+rng.IntN(2*meanLen), w)
		var terms []int32
		for len(terms) < k {
			t := int32(rng.IntN(w))
			if !seen[t] {
				seen[t] = true
				terms = append(terms, t)
			}
		}
		for _, t := range terms {
			seen[t] = false
			all.Add(t, int32(1+rng.IntN(20)))
		}
		all.EndDoc()
	}
	return all
}

// writeCorpus writes docs through the registry, as a user would.
func writeCorpus(t testing.TB, path string, docs *stream.Docs, o stream.WriteOptions) {
	t.Helper()
	w, err := stream.Create(path, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(docs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeFile writes raw content.
func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readAll opens path with a given chunk size (0 = default) and collects a pass.
func readAll(path string, o stream.Options, chunk int) (*stream.Docs, *Source, error) {
	src, err := Open(path, o)
	if err != nil {
		return nil, nil, err
	}
	if chunk > 0 {
		src.chunk = chunk
	}
	all, err := stream.Collect(context.Background(), src)
	return all, src, err
}

// sameDocs compares two corpora entry by entry, ignoring term order within a
// document (the format does not fix it).
func sameDocs(t testing.TB, got, want *stream.Docs) {
	t.Helper()
	if got.Len() != want.Len() || got.NNZ() != want.NNZ() {
		t.Fatalf("got %d docs, %d nnz; want %d docs, %d nnz", got.Len(), got.NNZ(), want.Len(), want.NNZ())
	}
	for i := range want.Len() {
		gt, gc := got.Doc(i)
		wt, wc := want.Doc(i)
		if !slices.Equal(sortedPairs(gt, gc), sortedPairs(wt, wc)) {
			t.Fatalf("doc %d: got %v %v, want %v %v", i, gt, gc, wt, wc)
		}
	}
}

func sortedPairs(terms, counts []int32) []int64 {
	p := make([]int64, len(terms))
	for i := range terms {
		p[i] = int64(terms[i])<<32 | int64(counts[i])
	}
	slices.Sort(p)
	return p
}

// settle waits for goroutines started by a test to exit.
func settle(t *testing.T, before int) {
	t.Helper()
	for range 400 {
		if runtime.NumGoroutine() <= before {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	buf := make([]byte, 1<<16)
	t.Fatalf("%d goroutines left running (had %d)\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
}
