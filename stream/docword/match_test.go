package docword

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/gzip"
)

func TestMatch(t *testing.T) {
	var gz bytes.Buffer
	z := gzip.NewWriter(&gz)
	z.Write([]byte("3\n10\n2\n1 4 2\n3 1 1\n"))
	z.Close()
	cases := []struct {
		path string
		head []byte
		want int
	}{
		{"docword.nips.txt", nil, 1},
		{"docword.nips.txt.gz", nil, 1},
		{"corpus.docword.zst", nil, 1},
		{"corpus.txt", []byte("3\n10\n2\n1 4 2\n3 1 1\n"), 2},
		{"corpus.txt", []byte("3\r\n10\r\n2\r\n1 4 2\r\n"), 2},
		{"corpus.bin", gz.Bytes(), 2},
		{"docword.nips.txt", []byte("hello\nworld\n"), 1},
		{"numbers.txt", []byte("1\n2\n3\n4\n5\n"), 0},
		{"corpus.txt", []byte("the cat\nsat\n"), 0},
		{"data.parquet", []byte("PAR1...."), 0},
	}
	for _, c := range cases {
		if got := Match(c.path, c.head); got != c.want {
			t.Errorf("Match(%q, %q) = %d, want %d", c.path, c.head, got, c.want)
		}
	}
}
