package docword

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/streamfit/streamfit/stream"
)

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	docs := randomCorpus(rng, 3000, 500, 12)
	// Trailing empty documents must survive: they live only in the header's D.
	for range 5 {
		docs.EndDoc()
	}
	for _, name := range []string{"docword.a.txt", "b.docword.gz", "c.docword.zst"} {
		path := filepath.Join(dir, name)
		writeCorpus(t, path, docs, stream.WriteOptions{Terms: 600})
		for _, chunk := range []int{0, 64, 4000} {
			for _, workers := range []int{1, 3} {
				o := stream.Options{BatchRows: 97, Workers: workers}
				src, err := Open(path, o)
				if err != nil {
					t.Fatal(err)
				}
				if chunk > 0 {
					src.chunk = chunk
				}
				if info := src.Info(); info.Rows != int64(docs.Len()) || info.Terms != 600 || info.NNZ != int64(docs.NNZ()) {
					t.Fatalf("%s: info %+v", name, info)
				}
				all := &stream.Docs{Offsets: []int{0}}
				for b, err := range src.Docs(context.Background()) {
					if err != nil {
						t.Fatalf("%s chunk %d: %v", name, chunk, err)
					}
					if b.Start != int64(all.Len()) {
						t.Fatalf("batch starts at %d after %d docs", b.Start, all.Len())
					}
					if b.Len() != 97 && b.Start+int64(b.Len()) != int64(docs.Len()) {
						t.Fatalf("batch of %d docs in the middle", b.Len())
					}
					for i := range b.Len() {
						all.AppendDoc(b.Doc(i))
					}
					b.Release()
				}
				sameDocs(t, all, docs)
			}
		}
	}
}

func TestHandWritten(t *testing.T) {
	// Gaps, a zero count, terms out of order, \r\n, tabs, trailing empty docs,
	// and no newline at the end.
	in := "6\r\n5\n6\n 2 3 1\r\n2\t1\t4\n4 5 0\n5 2 7\n5 5 1\n5 1 2"
	path := writeFile(t, t.TempDir(), "docword.hand.txt", in)
	for _, chunk := range []int{0, 8, 13} {
		got, _, err := readAll(path, stream.Options{BatchRows: 2}, chunk)
		if err != nil {
			t.Fatal(err)
		}
		want := &stream.Docs{Offsets: []int{0}}
		want.EndDoc()                                      // 1
		want.AppendDoc([]int32{2, 0}, []int32{1, 4})       // 2
		want.EndDoc()                                      // 3
		want.EndDoc()                                      // 4: only a zero count
		want.AppendDoc([]int32{1, 4, 0}, []int32{7, 1, 2}) // 5
		want.EndDoc()                                      // 6
		if !slices.Equal(got.Offsets, want.Offsets) || !slices.Equal(got.Terms, want.Terms) || !slices.Equal(got.Counts, want.Counts) {
			t.Fatalf("chunk %d: got %+v, want %+v", chunk, got, want)
		}
	}
}

func TestCompressionBySniffing(t *testing.T) {
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	z.Write([]byte("2\n3\n2\n1 1 1\n2 3 4\n"))
	z.Close()
	path := writeFile(t, t.TempDir(), "docword.misnamed.txt", buf.String())
	got, _, err := readAll(path, stream.Options{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != 2 || got.NNZ() != 2 || got.Terms[1] != 2 || got.Counts[1] != 4 {
		t.Fatalf("got %+v", got)
	}
}

func TestRereadSameBatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docword.r.txt.zst")
	docs := randomCorpus(rand.New(rand.NewPCG(3, 4)), 2000, 300, 10)
	writeCorpus(t, path, docs, stream.WriteOptions{})
	src, err := Open(path, stream.Options{BatchRows: 50})
	if err != nil {
		t.Fatal(err)
	}
	src.chunk = 512
	var first []*stream.Docs
	for pass := range 2 {
		i := 0
		for b, err := range src.Docs(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			if pass == 0 {
				first = append(first, b.Clone())
			} else {
				a := first[i]
				if a.Start != b.Start || !slices.Equal(a.Offsets, b.Offsets) || !slices.Equal(a.Terms, b.Terms) || !slices.Equal(a.Counts, b.Counts) {
					t.Fatalf("pass 2 batch %d differs", i)
				}
			}
			b.Release()
			i++
		}
		if i != len(first) {
			t.Fatalf("pass %d: %d batches, pass 1 had %d", pass+1, i, len(first))
		}
	}
}

func TestVocab(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "docword.v.txt.gz")
	docs := &stream.Docs{Offsets: []int{0}}
	docs.AppendDoc([]int32{0, 2}, []int32{1, 1})
	words := []string{"apple", "pear", "plum"}
	writeCorpus(t, path, docs, stream.WriteOptions{Vocab: words})
	vpath := filepath.Join(dir, "vocab.v.txt")
	src, err := stream.Open(path, stream.Options{VocabPath: vpath})
	if err != nil {
		t.Fatal(err)
	}
	if info := src.Info(); !slices.Equal(info.Vocab, words) || info.Terms != 3 {
		t.Fatalf("info %+v", info)
	}
	short := writeFile(t, dir, "short.vocab", "apple\npear\n")
	_, err = Open(path, stream.Options{VocabPath: short})
	checkErr(t, err, stream.ErrValue, "docword.v.txt.gz", 2)
	if got := VocabPath("/d/out.docword.zst"); got != "/d/out.docword.vocab" {
		t.Fatalf("VocabPath = %q", got)
	}

	// Without VocabPath the UCI vocab.v.txt beside docword.v.txt.gz is read;
	// one of the wrong length is an error naming it.
	src, err = stream.Open(path, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if info := src.Info(); !slices.Equal(info.Vocab, words) {
		t.Fatalf("vocabulary beside the file not picked up: %+v", info)
	}
	writeFile(t, dir, "vocab.v.txt", "apple\npear\n")
	_, err = Open(path, stream.Options{})
	checkErr(t, err, stream.ErrValue, "docword.v.txt.gz", 2)
	if !strings.Contains(err.Error(), "vocab.v.txt") {
		t.Fatalf("error does not name the vocabulary: %v", err)
	}
	os.Remove(vpath)
	if src, err := Open(path, stream.Options{}); err != nil || src.Info().Vocab != nil {
		t.Fatalf("without a vocabulary file: %v, %v", err, src.Info().Vocab)
	}
}

func TestCancel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docword.c.txt")
	writeCorpus(t, path, randomCorpus(rand.New(rand.NewPCG(5, 6)), 20000, 1000, 20), stream.WriteOptions{})
	before := runtime.NumGoroutine()
	src, err := Open(path, stream.Options{BatchRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	src.chunk = 4096
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	var last error
	start := time.Now()
	for b, err := range src.Docs(ctx) {
		if err != nil {
			last = err
			break
		}
		b.Release()
		if n++; n == 3 {
			cancel()
		}
		if n > 20 {
			t.Fatalf("pass went on for %d batches after cancel", n-3)
		}
	}
	if !errors.Is(last, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", last)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("cancel took %v", d)
	}
	settle(t, before)
}

func TestBreakLeaksNothing(t *testing.T) {
	dir := t.TempDir()
	docs := randomCorpus(rand.New(rand.NewPCG(7, 8)), 5000, 1000, 20)
	for _, name := range []string{"docword.l.txt", "docword.l.txt.zst", "docword.l.txt.gz"} {
		path := filepath.Join(dir, name)
		writeCorpus(t, path, docs, stream.WriteOptions{})
		before := runtime.NumGoroutine()
		src, err := Open(path, stream.Options{BatchRows: 10, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		src.chunk = 2048
		for range 3 {
			for b, err := range src.Docs(context.Background()) {
				if err != nil {
					t.Fatal(err)
				}
				b.Release()
				break
			}
		}
		settle(t, before)
	}
}

func TestProgress(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docword.p.txt.gz")
	docs := randomCorpus(rand.New(rand.NewPCG(9, 10)), 1000, 100, 5)
	writeCorpus(t, path, docs, stream.WriteOptions{})
	p := stream.NewProgress(0)
	if _, _, err := readAll(path, stream.Options{Progress: p}, 1024); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if p.Rows() != int64(docs.Len()) || p.Bytes() != st.Size() {
		t.Fatalf("progress %d rows %d bytes, want %d and %d", p.Rows(), p.Bytes(), docs.Len(), st.Size())
	}
}

func TestWriterAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "docword.x.txt"), stream.WriteOptions{Vocab: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	docs := &stream.Docs{Offsets: []int{0}}
	docs.AppendDoc([]int32{0}, []int32{3})
	if err := w.Write(docs); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	// A failing Close (term outside Terms) leaves nothing either.
	w2, _ := Create(filepath.Join(dir, "docword.y.txt"), stream.WriteOptions{Terms: 1})
	docs.AppendDoc([]int32{4}, []int32{1})
	w2.Write(docs)
	if err := w2.Close(); err == nil {
		t.Fatal("Close accepted a term outside the vocabulary")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
}
