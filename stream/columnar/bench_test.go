package columnar

import (
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// benchCorpus is 100k documents of 40–116 distinct terms (≈78 nnz each) over
// a vocabulary of 10000.
func benchCorpus() *stream.Docs {
	r := rand.New(rand.NewPCG(42, 42))
	b := &stream.Docs{Offsets: []int{0}}
	seen := make([]bool, 10000)
	for range 100000 {
		lo := len(b.Terms)
		for k := 40 + r.IntN(77); len(b.Terms)-lo < k; {
			t := int32(r.IntN(10000))
			if !seen[t] {
				seen[t] = true
				b.Add(t, int32(1+r.IntN(4)))
			}
		}
		for _, t := range b.Terms[lo:] {
			seen[t] = false
		}
		b.EndDoc()
	}
	return b
}

func benchRead(b *testing.B, k kind) {
	docs := benchCorpus()
	path := filepath.Join(b.TempDir(), "bench"+exts[k])
	writeDocs(b, path, docs, stream.WriteOptions{Terms: 10000})
	st, _ := os.Stat(path)
	nnz := float64(docs.NNZ())
	b.Run("decode", func(b *testing.B) {
		src, err := stream.Open(path, stream.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(st.Size())
		for b.Loop() {
			var n int
			for d, err := range src.Docs(context.Background()) {
				if err != nil {
					b.Fatal(err)
				}
				n += d.NNZ()
				d.Release()
			}
			if n != docs.NNZ() {
				b.Fatalf("read %d nnz, want %d", n, docs.NNZ())
			}
		}
		b.ReportMetric(nnz*float64(b.N)/b.Elapsed().Seconds(), "nnz/s")
	})
	b.Run("baseline-io.Copy", func(b *testing.B) {
		b.SetBytes(st.Size())
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, f)
			f.Close()
		}
		b.ReportMetric(nnz*float64(b.N)/b.Elapsed().Seconds(), "nnz/s")
	})
}

// Run: go test -run '^$' -bench Read -benchtime 20x ./stream/columnar/
func BenchmarkReadParquet(b *testing.B)     { benchRead(b, kindParquet) }
func BenchmarkReadArrow(b *testing.B)       { benchRead(b, kindArrow) }
func BenchmarkReadArrowStream(b *testing.B) { benchRead(b, kindStream) }
