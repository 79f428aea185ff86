package stream

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/streamfit/streamfit/bench/rss"
	"github.com/streamfit/streamfit/internal/sysinfo"
	"github.com/streamfit/streamfit/stream"
)

// BenchmarkRead is one full pass per iteration over the corpus in each
// format, with default options. Besides the rates per wall second it reports
// Mnnz/cpu-s, entries per CPU-second of the whole process (steadier than wall
// time on a shared machine; a pass on 2 idle cores runs up to twice that per
// wall second), peakAnon-MB, the largest anonymous RSS sampled during the
// passes (heap and runtime, without file pages: a memory-mapped Arrow file
// is not memory the pass holds), and peakRSS-MB, the kernel's VmHWM.
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
			// Read the file once untimed, so the pass and the baseline both
			// find it in the page cache: this measures decoding, not the disk.
			if _, err := copyFile(path); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			rss.Reset()
			stop := rss.SampleAnon(2 * time.Millisecond)
			cpu := sysinfo.CPUTime()
			var docs, nnz int64
			for b.Loop() {
				d, z, err := pass(context.Background(), src)
				if err != nil {
					b.Fatal(err)
				}
				docs, nnz = docs+d, nnz+z
			}
			cpuSec := (sysinfo.CPUTime() - cpu).Seconds()
			anon := stop()
			peak, _ := rss.Peak()
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(docs)/sec, "docs/s")
			b.ReportMetric(float64(nnz)/sec/1e6, "Mnnz/s")
			b.ReportMetric(float64(st.Size())*float64(b.N)/sec/1e6, "MB/s")
			b.ReportMetric(float64(nnz)/cpuSec/1e6, "Mnnz/cpu-s")
			b.ReportMetric(float64(anon)/1e6, "peakAnon-MB")
			b.ReportMetric(float64(peak)/1e6, "peakRSS-MB")
		})
	}
}

// BenchmarkBaseline reads the same bytes in the same run: "copy" is io.Copy
// of the file to io.Discard (the page cache's speed), "decompress" only
// decompresses it (gzip or zstd streams; every Parquet page), without
// parsing or decoding. The ratio of a format's Read rate to these is what
// its decoder costs on top.
func BenchmarkBaseline(b *testing.B) {
	dir, err := corpusDir(benchDocs())
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range files {
		path := filepath.Join(dir, f.file)
		baselines := map[string]func(string) (int64, error){"copy": copyFile}
		switch {
		case strings.HasSuffix(f.file, ".gz"), strings.HasSuffix(f.file, ".zst"):
			baselines["decompress"] = decompressStream
		case strings.HasSuffix(f.file, ".parquet"):
			baselines["decompress"] = decompressPages
		}
		for _, name := range []string{"copy", "decompress"} {
			read := baselines[name]
			if read == nil {
				continue
			}
			b.Run(f.name+"/"+name, func(b *testing.B) {
				st, _ := os.Stat(path)
				cpu := sysinfo.CPUTime()
				var out int64
				for b.Loop() {
					n, err := read(path)
					if err != nil {
						b.Fatal(err)
					}
					out += n
				}
				sec := b.Elapsed().Seconds()
				b.ReportMetric(float64(st.Size())*float64(b.N)/sec/1e6, "MB/s")
				b.ReportMetric(float64(out)/sec/1e6, "outMB/s")
				b.ReportMetric((sysinfo.CPUTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
			})
		}
	}
}

func copyFile(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.Copy(io.Discard, f)
}

// decompressStream decompresses a .gz or .zst file to io.Discard.
func decompressStream(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var r io.Reader
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return 0, err
		}
		defer z.Close()
		r = z
	} else {
		z, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return 0, err
		}
		defer z.Close()
		r = z
	}
	return io.Copy(io.Discard, r)
}

// decompressPages reads and decompresses every page of a Parquet file, one
// column chunk after another, without decoding levels or values.
func decompressPages(path string) (int64, error) {
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var n int64
	for i := range r.NumRowGroups() {
		rg := r.RowGroup(i)
		for c := range rg.NumColumns() {
			pr, err := rg.GetColumnPageReader(c)
			if err != nil {
				return n, err
			}
			for pr.Next() {
				n += int64(len(pr.Page().Data()))
			}
			if err := pr.Err(); err != nil {
				return n, err
			}
			pr.Close()
		}
	}
	return n, nil
}
