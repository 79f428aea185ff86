package text

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

func TestLines(t *testing.T) {
	dir := t.TempDir()
	content := "Hello world\r\nsecond line here\n\n\xffbad\xfe utf8\nlast, without newline\r"
	want := []string{"Hello world", "second line here", "", "\uFFFDbad\uFFFD utf8", "last, without newline"}
	for _, kind := range []string{"", "gzip", "zstd"} {
		for _, name := range []string{"corpus.txt", "corpus.bin"} {
			path := filepath.Join(dir, kind+name)
			writeFile(t, path, compress(t, kind, []byte(content)))
			for _, rows := range []int{1, 2, 100} {
				p := stream.NewProgress(0)
				src, err := OpenLines(path, stream.Options{BatchRows: rows, Workers: 2, Progress: p})
				if err != nil {
					t.Fatal(err)
				}
				for pass := 0; pass < 2; pass++ {
					got, err := collectTexts(t, src)
					if err != nil {
						t.Fatalf("%s: %v", path, err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s, %d rows per batch, pass %d: %q", path, rows, pass, got)
					}
				}
				st, _ := os.Stat(path)
				if p.Rows() != 2*int64(len(want)) || p.Bytes() != 2*st.Size() {
					t.Errorf("progress: %d rows, %d bytes", p.Rows(), p.Bytes())
				}
			}
		}
	}
}

func TestLinesLong(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 65 MB file")
	}
	long := strings.Repeat("abcdefgh ", (65<<20)/9)
	path := filepath.Join(t.TempDir(), "long.txt")
	writeFile(t, path, []byte("short\n"+long+"\nend"))
	src, err := OpenLines(path, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := collectTexts(t, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != "short" || got[1] != long || got[2] != "end" {
		t.Fatalf("read %d lines", len(got))
	}
}

func TestLinesErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.txt")
	writeFile(t, empty, nil)
	if _, err := OpenLines(empty, stream.Options{}); !errors.Is(err, stream.ErrEmpty) || !strings.Contains(err.Error(), empty) {
		t.Fatalf("empty file: %v", err)
	}
	if _, err := stream.OpenText(empty, stream.Options{}); !errors.Is(err, stream.ErrEmpty) {
		t.Fatalf("empty file through stream.OpenText: %v", err)
	}
	emptyGz := filepath.Join(dir, "empty.txt.gz")
	writeFile(t, emptyGz, compress(t, "gzip", nil))
	src, err := OpenLines(emptyGz, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := collectTexts(t, src); !errors.Is(err, stream.ErrEmpty) || !strings.Contains(err.Error(), emptyGz) {
		t.Fatalf("empty gzip stream: %v", err)
	}
	for _, kind := range []string{"gzip", "zstd"} {
		data := compress(t, kind, []byte(strings.Repeat("some text to compress\n", 1000)))
		trunc := filepath.Join(dir, "trunc-"+kind+".txt")
		writeFile(t, trunc, data[:len(data)/2])
		src, err := OpenLines(trunc, stream.Options{})
		if err == nil {
			_, err = collectTexts(t, src)
		}
		if !errors.Is(err, stream.ErrCorrupt) || !strings.Contains(err.Error(), trunc) {
			t.Fatalf("truncated %s: %v", kind, err)
		}
	}
	if _, err := OpenLines(filepath.Join(dir, "missing.txt"), stream.Options{}); err == nil {
		t.Fatal("missing file opened")
	}
	if _, err := OpenLines(dir, stream.Options{}); !errors.Is(err, stream.ErrFormat) {
		t.Fatalf("directory as lines: %v", err)
	}
}

func TestLinesCancel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "many.txt")
	writeFile(t, path, []byte(strings.Repeat("a line of text\n", 100000)))
	src, err := OpenLines(path, stream.Options{BatchRows: 10})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	var last error
	for _, err := range src.Texts(ctx) {
		if err != nil {
			last = err
			break
		}
		if n++; n == 3 {
			cancel()
		}
	}
	if !errors.Is(last, context.Canceled) {
		t.Fatalf("after cancel: %v (%d batches)", last, n)
	}
}

func TestDetect(t *testing.T) {
	dir := t.TempDir()
	for name, want := range map[string]string{
		"a.txt":           "text-lines",
		"a.lines.gz":      "text-lines",
		"A.TEXT.zst":      "text-lines",
		"docword.kos.txt": "",
		"a.csv":           "",
	} {
		path := filepath.Join(dir, name)
		writeFile(t, path, []byte("some text\n"))
		f, err := stream.Detect(path, "")
		if want == "" {
			if err == nil && strings.HasPrefix(f.Name, "text") {
				t.Errorf("%s detected as %s", name, f.Name)
			}
			continue
		}
		if err != nil || f.Name != want {
			t.Errorf("%s: detected %q, %v; want %s", name, f.Name, err, want)
		}
	}
	if f, err := stream.Detect(dir, ""); err != nil || f.Name != "text-dir" {
		t.Errorf("directory: detected %q, %v", f.Name, err)
	}
}
