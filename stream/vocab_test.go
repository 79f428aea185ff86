package stream

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A vocabulary in gensim's Dictionary.save_as_text format (lines sorted
// by word, as gensim writes them by default) gives each word its id; a
// plain vocabulary that starts with a number stays plain; ids given twice
// or missing are refused, naming the line.
func TestReadVocabGensim(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	got, err := ReadVocab(write("dict.txt", "4\n2\tapple\t3\n0\tbanana\t1\n3\tcar\t2\n1\tengine\t1\n"))
	if err != nil || !slices.Equal(got, []string{"banana", "engine", "apple", "car"}) {
		t.Errorf("gensim dictionary: %q, %v", got, err)
	}
	got, err = ReadVocab(write("plain.txt", "2002\nlocalhost\ncom\n"))
	if err != nil || !slices.Equal(got, []string{"2002", "localhost", "com"}) {
		t.Errorf("plain vocabulary starting with a number: %q, %v", got, err)
	}
	for _, c := range []struct{ name, content, want string }{
		{"twice.txt", "2\n0\tapple\t1\n0\tcar\t1\n", "id 0 given twice"},
		{"gap.txt", "2\n0\tapple\t1\n2\tcar\t1\n", "outside 0..1"},
	} {
		_, err := ReadVocab(write(c.name, c.content))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
