package text

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// fruit is small enough to check by hand:
//
//	word    count  docs
//	apple   5      4
//	banana  3      3
//	cherry  2      2
//	date    1      1
//	elder   1      1
//	fig     1      1
var fruit = []string{
	"Apple banana apple cherry",
	"apple, banana; DATE",
	"the apple and an elder fig",
	"banana cherry apple",
}

func TestBuildFilters(t *testing.T) {
	src := &memTexts{docs: fruit, batch: 3}
	for _, tc := range []struct {
		name   string
		b      BuildOptions
		words  []string
		counts []int64
	}{
		{"everything", BuildOptions{MinCount: 1, MaxDocFreq: 1}, []string{"apple", "banana", "cherry", "date", "elder", "fig"}, []int64{5, 3, 2, 1, 1, 1}},
		{"min count", BuildOptions{MinCount: 2, MaxDocFreq: 1}, []string{"apple", "banana", "cherry"}, []int64{5, 3, 2}},
		{"min docs", BuildOptions{MinCount: 1, MinDocs: 2, MaxDocFreq: 1}, []string{"apple", "banana", "cherry"}, []int64{5, 3, 2}},
		{"min docs 3", BuildOptions{MinCount: 1, MinDocs: 3, MaxDocFreq: 1}, []string{"apple", "banana"}, []int64{5, 3}},
		{"max doc freq", BuildOptions{MinCount: 1, MaxDocFreq: 0.5}, []string{"cherry", "date", "elder", "fig"}, []int64{2, 1, 1, 1}},
		{"max doc freq 0.75", BuildOptions{MinCount: 1, MaxDocFreq: 0.75}, []string{"banana", "cherry", "date", "elder", "fig"}, []int64{3, 2, 1, 1, 1}},
		{"max size", BuildOptions{MinCount: 1, MaxDocFreq: 1, MaxSize: 4}, []string{"apple", "banana", "cherry", "date"}, []int64{5, 3, 2, 1}},
		{"all filters", BuildOptions{MinCount: 2, MaxDocFreq: 0.8, MaxSize: 1}, []string{"banana"}, []int64{3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Build(context.Background(), src, stream.Options{Workers: 2}, tc.b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(v.Words, tc.words) || !reflect.DeepEqual(v.Counts, tc.counts) {
				t.Fatalf("got %q %v, want %q %v", v.Words, v.Counts, tc.words, tc.counts)
			}
			if v.Docs != 4 || v.Tokens != 13 || v.Distinct != 6 {
				t.Fatalf("docs %d, tokens %d, distinct %d", v.Docs, v.Tokens, v.Distinct)
			}
		})
	}
	v, _ := Build(context.Background(), src, stream.Options{}, BuildOptions{MinCount: 1, MaxDocFreq: 1})
	if want := []int64{4, 3, 2, 1, 1, 1}; !reflect.DeepEqual(v.DocFreq, want) {
		t.Fatalf("document frequencies %v, want %v", v.DocFreq, want)
	}
	// The defaults (count >= 5, in at most half the documents) leave nothing of
	// so small a corpus, which is an error rather than an empty file.
	if _, err := Build(context.Background(), src, stream.Options{}, BuildOptions{}); !errors.Is(err, stream.ErrEmpty) {
		t.Fatalf("defaults on a tiny corpus: %v", err)
	}
}

// zipfCorpus makes n documents of words with Zipf-distributed frequencies, so
// counts have many ties: a good test of deterministic ordering.
func zipfCorpus(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 1))
	z := rand.NewZipf(r, 1.2, 1, 2000)
	docs := make([]string, n)
	var sb strings.Builder
	for i := range docs {
		sb.Reset()
		for j := 5 + r.IntN(40); j > 0; j-- {
			fmt.Fprintf(&sb, "w%d ", z.Uint64())
		}
		docs[i] = sb.String()
	}
	return docs
}

func TestBuildDeterministic(t *testing.T) {
	docs := zipfCorpus(3000, 7)
	var first *Vocabulary
	for _, workers := range []int{1, 2, 3} {
		for _, batch := range []int{7, 500} {
			v, err := Build(context.Background(), &memTexts{docs: docs, batch: batch}, stream.Options{Workers: workers}, BuildOptions{MinCount: 2, MaxDocFreq: 0.9})
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = v
				continue
			}
			if !reflect.DeepEqual(v, first) {
				t.Fatalf("workers %d, batch %d: vocabulary differs", workers, batch)
			}
		}
	}
	for i := 1; i < len(first.Words); i++ {
		if c0, c1 := first.Counts[i-1], first.Counts[i]; c0 < c1 || c0 == c1 && first.Words[i-1] >= first.Words[i] {
			t.Fatalf("words %d and %d out of order: %s %d, %s %d", i-1, i, first.Words[i-1], c0, first.Words[i], c1)
		}
	}
}

func TestVocabularyWrite(t *testing.T) {
	dir := t.TempDir()
	v, err := Build(context.Background(), &memTexts{docs: fruit, batch: 10}, stream.Options{}, BuildOptions{MinCount: 2, MaxDocFreq: 1})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "vocab.txt")
	if err := v.Write(path); err != nil {
		t.Fatal(err)
	}
	words, err := stream.ReadVocab(path)
	if err != nil || !reflect.DeepEqual(words, v.Words) {
		t.Fatalf("read back %q, %v", words, err)
	}
	if err := v.WriteCounts(path + ".counts"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path + ".counts")
	if want := "word\tcount\tdocs\napple\t5\t4\nbanana\t3\t3\ncherry\t2\t2\n"; string(got) != want {
		t.Fatalf("counts file:\n%s", got)
	}
	if err := (&Vocabulary{}).Write(filepath.Join(dir, "empty.txt")); err == nil {
		t.Fatal("wrote an empty vocabulary")
	}
}

func TestBuildErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.txt.gz")
	writeFile(t, path, compress(t, "gzip", nil))
	src, err := OpenLines(path, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(context.Background(), src, stream.Options{}, BuildOptions{}); !errors.Is(err, stream.ErrEmpty) {
		t.Fatalf("empty input: %v", err)
	}
	if _, err := Build(context.Background(), src, stream.Options{TokenPattern: "("}, BuildOptions{}); err == nil {
		t.Fatal("bad pattern accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Build(ctx, &memTexts{docs: zipfCorpus(1000, 1), batch: 10}, stream.Options{}, BuildOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
