package stream

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamfit/streamfit/bench/rss"
	"github.com/streamfit/streamfit/stream"
)

// BenchmarkRead is one full pass per iteration over the corpus in each format;
// BenchmarkBaseline reads the same bytes with io.Copy in the same run, so the
// ratio of the two is what the decoder costs over the disk/page cache.
func BenchmarkRead(b *testing.B) {
	dir, err := corpusDir(benchDocs())
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range files {
		path := filepath.Join(dir, f.file)
		b.Run(f.name, func(b *testing.B) {
			src, err := stream.Open(path, stream.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer stream.Close(src)
			st, _ := os.Stat(path)
			rss.Reset()
			var docs, nnz int64
			for b.Loop() {
				d, z, err := pass(context.Background(), src)
				if err != nil {
					b.Fatal(err)
				}
				docs, nnz = docs+d, nnz+z
			}
			peak, _ := rss.Peak()
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(docs)/sec, "docs/s")
			b.ReportMetric(float64(nnz)/sec/1e6, "Mnnz/s")
			b.ReportMetric(float64(st.Size())*float64(b.N)/sec/1e6, "MB/s")
			b.ReportMetric(float64(peak)/1e6, "peakRSS-MB")
		})
	}
}

func BenchmarkBaseline(b *testing.B) {
	dir, err := corpusDir(benchDocs())
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range files {
		path := filepath.Join(dir, f.file)
		b.Run(f.name, func(b *testing.B) {
			var n int64
			for b.Loop() {
				fh, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				c, err := io.Copy(io.Discard, fh)
				fh.Close()
				if err != nil {
					b.Fatal(err)
				}
				n += c
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds()/1e6, "MB/s")
		})
	}
}
