package stream_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// spillCorpus writes the same documents as a gzipped docword file and as
// raw text lines with their vocabulary, and returns both paths and the
// vocabulary file. Every 5th document is empty, and term ids come in no
// particular order in the text (the tokenizer's order), so the spill's
// term differences are of both signs.
func spillCorpus(t testing.TB, docs int) (docword, text, vocab string) {
	t.Helper()
	dir := t.TempDir()
	const d = 300
	words := make([]string, d)
	for i := range words {
		words[i] = fmt.Sprintf("wd%03dx", i)
	}
	vocab = filepath.Join(dir, "vocab.txt")
	if err := os.WriteFile(vocab, []byte(strings.Join(words, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var lines strings.Builder
	b := stream.NewDocs(0)
	for i := range docs {
		if i%5 == 4 {
			lines.WriteString("\n")
			b.EndDoc()
			continue
		}
		counts := map[int32]int32{}
		var order []int32
		for range 1 + rng.IntN(40) {
			w := int32(rng.IntN(d))
			if rng.IntN(4) == 0 {
				w = int32(rng.IntN(d/10)) * 10 // frequent words, large jumps
			}
			if counts[w] == 0 {
				order = append(order, w)
			}
			counts[w] += 1 + int32(rng.IntN(3))*int32(rng.IntN(2))
			lines.WriteString(words[w] + " ")
		}
		lines.WriteString("\n")
		slices.Sort(order)
		for _, w := range order {
			b.Add(w, counts[w])
		}
		b.EndDoc()
	}
	text = filepath.Join(dir, "docs.txt")
	if err := os.WriteFile(text, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	docword = filepath.Join(dir, "corpus.docword.gz")
	w, err := stream.Create(docword, stream.WriteOptions{Terms: d})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return docword, text, vocab
}

// passBatches reads one pass into deep copies of its batches; stop > 0
// breaks out of the loop after that many batches.
func passBatches(t *testing.T, ctx context.Context, src stream.DocSource, stop int) []*stream.Docs {
	t.Helper()
	var out []*stream.Docs
	for b, err := range src.Docs(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b.Clone())
		b.Release()
		if stop > 0 && len(out) == stop {
			break
		}
	}
	return out
}

// sameBatches fails unless got and want are the same batches: same count,
// Start, offsets, terms and counts.
func sameBatches(t *testing.T, what string, got, want []*stream.Docs) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d batches, want %d", what, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Start != w.Start || !slices.Equal(g.Offsets, w.Offsets) || !slices.Equal(g.Terms, w.Terms) || !slices.Equal(g.Counts, w.Counts) {
			t.Fatalf("%s: batch %d differs: start %d/%d, %d/%d documents, %d/%d entries", what, i, g.Start, w.Start, g.Len(), w.Len(), g.NNZ(), w.NNZ())
		}
	}
}

// dirEntries lists the files left in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// Passes 2 and 3 of a spilled source, read from the spill file, give the
// batches of the source itself, for docword.gz and raw text, batch sizes
// that divide the corpus and that leave a short last batch, one worker and
// several; Close leaves no file behind.
func TestSpillSameBatches(t *testing.T) {
	ctx := context.Background()
	docword, text, vocab := spillCorpus(t, 503)
	for _, in := range []struct{ name, path string }{{"docword.gz", docword}, {"text", text}} {
		for _, rows := range []int{1, 7, 100, 4096} {
			for _, workers := range []int{1, 3} {
				t.Run(fmt.Sprintf("%s/rows=%d/workers=%d", in.name, rows, workers), func(t *testing.T) {
					o := stream.Options{BatchRows: rows, Workers: workers, VocabPath: vocab}
					src, err := stream.Open(in.path, o)
					if err != nil {
						t.Fatal(err)
					}
					want := passBatches(t, ctx, src, 0)
					stream.Close(src)
					if len(want) == 0 || want[len(want)-1].Len() == 0 {
						t.Fatalf("the corpus gave %d batches", len(want))
					}
					if src, err = stream.Open(in.path, o); err != nil {
						t.Fatal(err)
					}
					dir := t.TempDir()
					sp := stream.Spill(src, stream.SpillOptions{Dir: dir, Workers: workers, Warn: func(err error) { t.Errorf("warned: %v", err) }})
					if sp.Info().Format != src.Info().Format || sp.Info().Terms != src.Info().Terms {
						t.Fatalf("Info %+v, want the source's %+v", sp.Info(), src.Info())
					}
					for pass := 1; pass <= 3; pass++ {
						sameBatches(t, fmt.Sprintf("pass %d", pass), passBatches(t, ctx, sp, 0), want)
						if ok, size := sp.Spilled(); !ok || size <= 0 {
							t.Fatalf("after pass %d: spilled %v, %d bytes", pass, ok, size)
						}
						// Where an open file can lose its name, the
						// spill has none: nothing outlives the process.
						if n := len(dirEntries(t, dir)); n > 1 || n == 1 && runtime.GOOS != "windows" {
							t.Fatalf("after pass %d: %d files in the spill directory", pass, n)
						}
					}
					if err := sp.Close(); err != nil {
						t.Fatal(err)
					}
					if left := dirEntries(t, dir); len(left) != 0 {
						t.Fatalf("files left after Close: %v", left)
					}
				})
			}
		}
	}
}

// A first pass stopped early, by the consumer or by a cancelled context,
// leaves no spill file: the next pass reads the source again (and writes
// the file), so no later pass trusts a partial copy.
func TestSpillEarlyStop(t *testing.T) {
	docword, _, _ := spillCorpus(t, 300)
	o := stream.Options{BatchRows: 16, Workers: 2}
	src, err := stream.Open(docword, o)
	if err != nil {
		t.Fatal(err)
	}
	want := passBatches(t, context.Background(), src, 0)
	stops := map[string]func(sp *stream.SpillSource){
		"break": func(sp *stream.SpillSource) { passBatches(t, context.Background(), sp, 3) },
		"cancel": func(sp *stream.SpillSource) {
			ctx, cancel := context.WithCancel(context.Background())
			n := 0
			for b, err := range sp.Docs(ctx) {
				if err != nil {
					break
				}
				b.Release()
				if n++; n == 3 {
					cancel()
				}
			}
			cancel()
		},
	}
	for name, stop := range stops {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			sp := stream.Spill(src, stream.SpillOptions{Dir: dir})
			stop(sp)
			if ok, _ := sp.Spilled(); ok {
				t.Fatal("a stopped pass completed the spill file")
			}
			if left := dirEntries(t, dir); len(left) != 0 {
				t.Fatalf("a stopped pass left %v", left)
			}
			sameBatches(t, "pass after the stop", passBatches(t, context.Background(), sp, 0), want)
			if ok, _ := sp.Spilled(); !ok {
				t.Fatal("a complete pass did not complete the spill file")
			}
			sameBatches(t, "pass from the spill", passBatches(t, context.Background(), sp, 0), want)
			// A pass from the spill stopped early leaves the file in place.
			passBatches(t, context.Background(), sp, 2)
			sameBatches(t, "pass after a stopped spill pass", passBatches(t, context.Background(), sp, 0), want)
			sp.Close()
		})
	}
}

// A spill directory that cannot hold the file gives one warning, and every
// pass reads the source.
func TestSpillNoDirectory(t *testing.T) {
	docword, _, _ := spillCorpus(t, 100)
	src, err := stream.Open(docword, stream.Options{BatchRows: 9})
	if err != nil {
		t.Fatal(err)
	}
	want := passBatches(t, context.Background(), src, 0)
	var warnings []error
	sp := stream.Spill(src, stream.SpillOptions{Dir: filepath.Join(t.TempDir(), "missing"), Warn: func(err error) { warnings = append(warnings, err) }})
	defer sp.Close()
	for pass := 1; pass <= 3; pass++ {
		sameBatches(t, fmt.Sprintf("pass %d", pass), passBatches(t, context.Background(), sp, 0), want)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0].Error(), "missing") {
		t.Fatalf("warnings %v, want one naming the directory", warnings)
	}
}

// DecodeHeavy picks the text formats, whatever their compression, and not
// the columnar lists.
func TestDecodeHeavy(t *testing.T) {
	for _, c := range []struct {
		info stream.Info
		want bool
	}{
		{stream.Info{Format: "docword"}, true},
		{stream.Info{Format: "text-lines", Layout: "text"}, true},
		{stream.Info{Format: "text-dir", Layout: "text"}, true},
		{stream.Info{Format: "parquet", Layout: "text"}, true},
		{stream.Info{Format: "parquet", Layout: "lists"}, false},
		{stream.Info{Format: "arrow", Layout: "pairs"}, false},
		{stream.Info{Format: "memory"}, false},
	} {
		if got := stream.DecodeHeavy(c.info); got != c.want {
			t.Errorf("DecodeHeavy(%s/%s) = %v", c.info.Format, c.info.Layout, got)
		}
	}
}

// BenchmarkSpillPass compares a pass over a gzipped docword file with a
// pass over its spill file (go test ./stream -run '^$' -bench SpillPass).
func BenchmarkSpillPass(b *testing.B) {
	docword, _, _ := spillCorpus(b, 20000)
	src, err := stream.Open(docword, stream.Options{})
	if err != nil {
		b.Fatal(err)
	}
	sp := stream.Spill(src, stream.SpillOptions{Dir: b.TempDir()})
	defer sp.Close()
	var nnz int64
	pass := func(s stream.DocSource) {
		nnz = 0
		for d, err := range s.Docs(context.Background()) {
			if err != nil {
				b.Fatal(err)
			}
			nnz += int64(d.NNZ())
			d.Release()
		}
	}
	pass(sp) // writes the spill file
	for _, c := range []struct {
		name string
		src  stream.DocSource
	}{{"docword.gz", src}, {"spill", sp}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				pass(c.src)
			}
			b.ReportMetric(float64(nnz)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}
