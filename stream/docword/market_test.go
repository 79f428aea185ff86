package docword

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// A Matrix Market coordinate file as gensim's MmCorpus writes it (a padded
// size line, whole counts written as reals, documents without entries
// left out), with comment lines, reads as the same documents as the UCI
// docword file of the same entries, whatever the chunking, compressed or
// not, and is found by its banner.
func TestMatrixMarket(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	docs := randomCorpus(rng, 300, 80, 12)
	dir := t.TempDir()
	uci := filepath.Join(dir, "docword.c.txt")
	writeCorpus(t, uci, docs, stream.WriteOptions{Terms: 80})
	var b strings.Builder
	b.WriteString("%%MatrixMarket matrix coordinate real general\n% written by a test\n%\n")
	b.WriteString(strconv.Itoa(docs.Len()) + " 80 " + strconv.Itoa(docs.NNZ()) + strings.Repeat(" ", 30) + "\n")
	for i := range docs.Len() {
		terms, counts := docs.Doc(i)
		for j, w := range terms {
			c := strconv.Itoa(int(counts[j]))
			if j%2 == 0 {
				c += ".0"
			}
			b.WriteString(strconv.Itoa(i+1) + " " + strconv.Itoa(int(w)+1) + " " + c + "\n")
		}
	}
	mm := writeFile(t, dir, "corpus.mm", b.String())
	zst := filepath.Join(dir, "corpus.mtx.zst")
	if err := os.WriteFile(zst, zstdBytes(t, []byte(b.String())), 0o644); err != nil {
		t.Fatal(err)
	}
	want, _, err := readAll(uci, stream.Options{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{mm, zst} {
		if f, err := stream.Detect(path, ""); err != nil || f.Name != "docword" {
			t.Fatalf("%s detected as %q, %v", path, f.Name, err)
		}
		for _, chunk := range []int{0, 64, 1000} {
			got, src, err := readAll(path, stream.Options{BatchRows: 7}, chunk)
			if err != nil {
				t.Fatal(err)
			}
			if info := src.Info(); info.Layout != "matrix-market" || info.Rows != int64(docs.Len()) || info.Terms != 80 {
				t.Fatalf("info %+v", info)
			}
			sameDocs(t, got, want)
		}
	}
}

// What a Matrix Market file cannot hold as counts is refused, naming the
// line: another kind of matrix, a fraction, a UCI docword's count written
// as a real (only Matrix Market files write them so).
func TestMatrixMarketRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, content, want string }{
		{"symmetric.mm", "%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 1 1\n", "general"},
		{"array.mm", "%%MatrixMarket matrix array real general\n2 2\n1\n", "coordinate"},
		{"fraction.mm", "%%MatrixMarket matrix coordinate real general\n2 3 2\n1 1 2.0\n2 3 0.5\n", "0.5"},
		{"nosize.mm", "%%MatrixMarket matrix coordinate real general\n% only comments\n", "size line"},
		{"docword.real.txt", "2\n3\n1\n1 1 2.0\n", "integer"},
	} {
		path := writeFile(t, dir, c.name, c.content)
		_, _, err := readAll(path, stream.Options{}, 0)
		var se *stream.Error
		if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s: %v; want an error naming the file and saying %q", c.name, err, c.want)
		}
	}
}
