package docword

import (
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamfit/streamfit/internal/sysinfo"
	"github.com/streamfit/streamfit/stream"
)

// BenchmarkRead reads a corpus of 100k documents × ~78 entries (7.8M nnz)
// plain, gzip and zstd, next to an io.Copy of the same file's bytes (the
// baseline: reading without parsing; for compressed files, with decompression).
//
//	go test -run XXX -bench BenchmarkRead -benchtime 5x ./stream/docword/
func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	docs := benchCorpus(100_000, 50_000, 78)
	nnz := float64(docs.NNZ())
	for _, name := range []string{"docword.bench.txt", "docword.bench.txt.gz", "docword.bench.txt.zst"} {
		path := filepath.Join(dir, name)
		writeCorpus(b, path, docs, stream.WriteOptions{Terms: 50_000})
		st, _ := os.Stat(path)
		b.Run(name, func(b *testing.B) {
			src, err := Open(path, stream.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(st.Size())
			cpu0 := sysinfo.CPUTime()
			for b.Loop() {
				n := 0
				for batch, err := range src.Docs(context.Background()) {
					if err != nil {
						b.Fatal(err)
					}
					n += batch.NNZ()
					batch.Release()
				}
				if n != docs.NNZ() {
					b.Fatalf("read %d nnz, want %d", n, docs.NNZ())
				}
			}
			b.ReportMetric(nnz*float64(b.N)/b.Elapsed().Seconds(), "nnz/s")
			// Throughput per CPU second does not depend on what else the
			// machine is running.
			b.ReportMetric(nnz*float64(b.N)/(sysinfo.CPUTime()-cpu0).Seconds(), "nnz/cpu-s")
		})
		b.Run(name+"/io.Copy", func(b *testing.B) {
			b.SetBytes(st.Size())
			for b.Loop() {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				dec, closeDec, err := decompressor(f)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, dec); err != nil {
					b.Fatal(err)
				}
				closeDec()
				f.Close()
			}
			b.ReportMetric(nnz*float64(b.N)/b.Elapsed().Seconds(), "nnz/s")
		})
	}
}

// benchCorpus makes n documents of about meanLen distinct terms out of w.
func benchCorpus(n, w, meanLen int) *stream.Docs {
	rng := rand.New(rand.NewPCG(11, 12))
	all := &stream.Docs{Offsets: []int{0}}
	stamp := make([]int, w)
	for d := 1; d <= n; d++ {
		k := meanLen/2 + rng.IntN(meanLen+1)
		for j := 0; j < k; {
			t := rng.IntN(w)
			if stamp[t] == d {
				continue
			}
			stamp[t] = d
			all.Add(int32(t), int32(1+rng.IntN(5)))
			j++
		}
		all.EndDoc()
	}
	return all
}
