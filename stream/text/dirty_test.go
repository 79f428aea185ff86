package text

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// Text as editors and other systems leave it: a byte order mark at the
// start, lines ending with CR alone, bytes that are not UTF-8. The mark is
// no part of the first word, CR-only lines are lines, and no word of the
// vocabulary holds U+FFFD, with the default tokens or a custom pattern.
func TestDirtyText(t *testing.T) {
	dir := t.TempDir()
	path := func(name string, data string) string {
		p := filepath.Join(dir, name)
		writeFile(t, p, []byte(data))
		return p
	}
	for _, c := range []struct {
		name, data, pattern string
		lines               []string
		words               []string
	}{
		{"bom.txt", "\ufeffw1 alpha\nbeta w1\n", "", []string{"w1 alpha", "beta w1"}, []string{"w1", "alpha", "beta"}},
		{"bom-pattern.txt", "\ufeffw1 alpha\nbeta w1\n", `\S+`, []string{"w1 alpha", "beta w1"}, []string{"w1", "alpha", "beta"}},
		{"cr.txt", "one two\rthree four\rfive six\r", "", []string{"one two", "three four", "five six"}, []string{"five", "four", "one", "six", "three", "two"}},
		{"latin1.txt", "caf\xe9 latin\ncaf\xe9 noir\n", `\S+`, []string{"caf\ufffd latin", "caf\ufffd noir"}, []string{"latin", "noir"}},
		{"latin1-default.txt", "caf\xe9 latin\ncaf\xe9 noir\n", "", nil, []string{"caf", "latin", "noir"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := path(c.name, c.data)
			o := stream.Options{TokenPattern: c.pattern, StopWords: "none"}
			src, err := OpenLines(p, o)
			if err != nil {
				t.Fatal(err)
			}
			if c.lines != nil {
				got, err := collectTexts(t, src)
				if err != nil || !reflect.DeepEqual(got, c.lines) {
					t.Fatalf("lines %q, %v; want %q", got, err, c.lines)
				}
			}
			v, err := Build(context.Background(), src, o, BuildOptions{MinCount: 1, MaxDocFreq: 1})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, w := range v.Words {
				got[w] = true
			}
			want := map[string]bool{}
			for _, w := range c.words {
				want[w] = true
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("vocabulary %q, want %q", v.Words, c.words)
			}
		})
	}
}
