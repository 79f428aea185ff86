package text

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// bruteBag counts the tokens of each document against vocab the obvious way.
func bruteBag(t *testing.T, docs, vocab []string, o stream.Options) []map[int32]int32 {
	tok, err := NewTokenizer(o)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]map[int32]int32, len(docs))
	for i, d := range docs {
		out[i] = map[int32]int32{}
		for _, w := range tok.Tokens(nil, d) {
			if id := slices.Index(vocab, w); id >= 0 {
				out[i][int32(id)]++
			}
		}
	}
	return out
}

func checkBag(t *testing.T, src stream.DocSource, want []map[int32]int32, d int) {
	t.Helper()
	all, err := stream.Collect(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if err := all.Validate(d); err != nil {
		t.Fatal(err)
	}
	if all.Len() != len(want) {
		t.Fatalf("%d documents, want %d", all.Len(), len(want))
	}
	for i := range want {
		terms, counts := all.Doc(i)
		if !slices.IsSorted(terms) || len(terms) != len(want[i]) {
			t.Fatalf("document %d: terms %v, want %v", i, terms, want[i])
		}
		for j, id := range terms {
			if counts[j] != want[i][id] {
				t.Fatalf("document %d: term %d counted %d, want %d", i, id, counts[j], want[i][id])
			}
		}
	}
}

func TestBag(t *testing.T) {
	docs := append(zipfCorpus(500, 3), "", "W1 w1 W1, w2!", "nothing in the vocabulary")
	o := stream.Options{Workers: 2, BatchRows: 37}
	v, err := Build(context.Background(), &memTexts{docs: docs, batch: 50}, o, BuildOptions{MinCount: 3, MaxDocFreq: 0.9, MaxSize: 300})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	vocabPath := filepath.Join(dir, "vocab.txt")
	if err := v.Write(vocabPath); err != nil {
		t.Fatal(err)
	}
	want := bruteBag(t, docs, v.Words, o)

	// Straight from a TextSource.
	o.VocabPath = vocabPath
	src, err := OpenBag(&memTexts{docs: docs, batch: 41}, o)
	if err != nil {
		t.Fatal(err)
	}
	if info := src.Info(); info.Terms != len(v.Words) || len(info.Vocab) != len(v.Words) || info.Format != "memory" {
		t.Fatalf("info %+v", info)
	}
	checkBag(t, src, want, len(v.Words))

	// Through stream.Open, from a zstd file of lines and from a directory.
	lines := filepath.Join(dir, "corpus.txt.zst")
	writeFile(t, lines, compress(t, "zstd", []byte(strings.Join(docs, "\n")+"\n")))
	tree := filepath.Join(dir, "tree")
	os.Mkdir(tree, 0o755)
	for i, d := range docs {
		writeFile(t, filepath.Join(tree, string(rune('a'+i/26/26))+string(rune('a'+i/26%26))+string(rune('a'+i%26))), []byte(d))
	}
	for _, path := range []string{lines, tree} {
		for _, workers := range []int{1, 3} {
			o.Workers = workers
			src, err := stream.Open(path, o)
			if err != nil {
				t.Fatal(err)
			}
			if f := src.Info().Format; f != "text-lines" && f != "text-dir" {
				t.Fatalf("%s: format %q", path, f)
			}
			checkBag(t, src, want, len(v.Words))
		}
	}
}

func TestBagVocabErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "corpus.txt")
	writeFile(t, path, []byte("some text\n"))
	if _, err := stream.Open(path, stream.Options{}); !errors.Is(err, stream.ErrNeedVocab) {
		t.Fatalf("no vocabulary: %v", err)
	}
	src := &memTexts{docs: []string{"x"}, batch: 1}
	if _, err := OpenBag(src, stream.Options{}); !errors.Is(err, stream.ErrNeedVocab) {
		t.Fatalf("no vocabulary: %v", err)
	}
	missing := filepath.Join(dir, "missing-vocab.txt")
	if _, err := stream.Open(path, stream.Options{VocabPath: missing}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("missing vocabulary: %v", err)
	}
	bad := filepath.Join(dir, "dup-vocab.txt")
	writeFile(t, bad, []byte("some\ntext\nsome\n"))
	if _, err := OpenBag(src, stream.Options{VocabPath: bad}); !errors.Is(err, stream.ErrValue) {
		t.Fatalf("duplicate word: %v", err)
	}
	good := filepath.Join(dir, "vocab.txt")
	writeFile(t, good, []byte("some\ntext\n"))
	if _, err := OpenBag(src, stream.Options{VocabPath: good, TokenPattern: "("}); err == nil {
		t.Fatal("bad token pattern accepted")
	}
}

func BenchmarkBag(b *testing.B) {
	docs := zipfCorpus(20000, 5)
	var size int64
	for _, d := range docs {
		size += int64(len(d))
	}
	v, err := Build(context.Background(), &memTexts{docs: docs, batch: 1000}, stream.Options{}, BuildOptions{MinCount: 1, MaxDocFreq: 1})
	if err != nil {
		b.Fatal(err)
	}
	tok, _ := NewTokenizer(stream.Options{})
	src := NewBag(&memTexts{docs: docs, batch: 1000}, tok, v.Words, 2)
	b.SetBytes(size)
	var nnz int64
	for b.Loop() {
		for d, err := range src.Docs(context.Background()) {
			if err != nil {
				b.Fatal(err)
			}
			nnz += int64(d.NNZ())
			d.Release()
		}
	}
	b.ReportMetric(float64(nnz)/b.Elapsed().Seconds(), "nnz/s")
}
