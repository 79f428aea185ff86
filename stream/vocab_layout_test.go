package stream

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A gensim dictionary whose first line (the document count) is missing
// still reads as one, not as words "0\tw0\t5"; a directory named as a
// vocabulary says what it is.
func TestVocabLayouts(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "dict.txt")
	os.WriteFile(p, []byte("1\tbeta\t3\n0\talpha\t5\n2\tgamma\t1\n"), 0o644)
	words, err := ReadVocab(p)
	if err != nil || !reflect.DeepEqual(words, []string{"alpha", "beta", "gamma"}) {
		t.Fatalf("gensim dictionary without its count: %q, %v", words, err)
	}
	os.WriteFile(p, []byte("1\tbeta\t3\n1\talpha\t5\n"), 0o644)
	if _, err := ReadVocab(p); !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("an id given twice: %v", err)
	}
	if _, err := ReadVocab(dir); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("a directory: %v", err)
	}
}
