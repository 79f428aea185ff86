package text

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/streamfit/streamfit/stream"
)

func TestTokenize(t *testing.T) {
	dir := t.TempDir()
	stopFile := filepath.Join(dir, "stop.txt")
	os.WriteFile(stopFile, []byte("# my list\nFoo\n\n  bar  \n"), 0o644)
	for _, tc := range []struct {
		name string
		o    stream.Options
		in   string
		want []string
	}{
		{"case and punctuation", stream.Options{StopWords: "none"}, "Hello, World! I said: it's HeLLo.", []string{"hello", "world", "said", "it", "hello"}},
		{"english stop words", stream.Options{}, "The cat and THE dog, of course", []string{"cat", "dog", "course"}},
		{"keep case", stream.Options{KeepCase: true}, "The cat saw the Dog", []string{"The", "cat", "saw", "Dog"}},
		{"digits and underscores", stream.Options{StopWords: "none"}, "R2D2 in 2024 x 7 snake_case foo-bar __", []string{"r2d2", "in", "2024", "snake_case", "foo", "bar", "__"}},
		{"unicode letters", stream.Options{StopWords: "none"}, "Ünïcödé ΑΘΗΝΑ Straße 東京 ça é", []string{"ünïcödé", "αθηνα", "straße", "東京", "ça"}},
		{"unicode digits", stream.Options{StopWords: "none"}, "٣٤ ½½ x²", []string{"٣٤"}},
		{"combining marks split tokens", stream.Options{StopWords: "none"}, "cafe\u0301 café", []string{"cafe", "café"}},
		{"invalid utf-8", stream.Options{StopWords: "none"}, "ab\xffcd\xfe\xfeE", []string{"ab", "cd"}},
		{"empty", stream.Options{}, "", nil},
		{"sklearn spelling is the default", stream.Options{TokenPattern: `(?u)\b\w\w+\b`, StopWords: "none"}, "A bc-DE", []string{"bc", "de"}},
		{"custom pattern", stream.Options{TokenPattern: `[a-z]+`, StopWords: "none"}, "Hello x-Y 42", []string{"hello", "x", "y"}},
		{"custom pattern group", stream.Options{TokenPattern: `#(\w+)`}, "see #Go and #the #rust_lang", []string{"go", "rust_lang"}},
		{"custom pattern keep case", stream.Options{TokenPattern: `\S+`, KeepCase: true, StopWords: "none"}, " Ab  c\td ", []string{"Ab", "c", "d"}},
		{"custom pattern drops line breaks", stream.Options{TokenPattern: `\w+\s\w+`, StopWords: "none"}, "ab cd\nef gh", []string{"ab cd", "ef gh"}},
		{"stop word file", stream.Options{StopWords: stopFile}, "foo Bar baz FOO the", []string{"baz", "the"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := NewTokenizer(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if got := tok.Tokens(nil, tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Tokens(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestTokenizerErrors(t *testing.T) {
	if _, err := NewTokenizer(stream.Options{TokenPattern: "[a-"}); err == nil || !strings.Contains(err.Error(), "token pattern") {
		t.Fatalf("bad pattern: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "nope.txt")
	if _, err := NewTokenizer(stream.Options{StopWords: missing}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("missing stop word file: %v", err)
	}
}

func TestEnglishStopWords(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range EnglishStopWords {
		if seen[w] || w != strings.ToLower(w) || utf8.RuneCountInString(w) < 2 {
			t.Errorf("stop word %q: duplicate, not lower case or too short", w)
		}
		seen[w] = true
	}
}

// reference is the default tokenizer written the slow, obvious way: the regular
// expression scikit-learn uses, with Unicode classes spelled out for Go's RE2
// (whose \w and \b are ASCII only), on the text, then lower-casing.
var reference = regexp.MustCompile(`[\p{L}\p{Nd}_][\p{L}\p{Nd}_]+`)

func referenceTokens(text string, keepCase bool, stop map[string]struct{}) []string {
	var out []string
	for _, m := range reference.FindAllString(text, -1) {
		if !keepCase {
			m = strings.ToLower(m)
		}
		if _, ok := stop[m]; !ok {
			out = append(out, m)
		}
	}
	return out
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "Hello, World!", "ΑΘΗΝΑ 東京 İstanbul", "a\xffb cd\xc3", "x_1 __ 22 the THE"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	custom, err := NewTokenizer(stream.Options{TokenPattern: `\S+|(\d)`, StopWords: "none"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string, keepCase bool) {
		for _, stop := range []string{"none", "english"} {
			tok, err := NewTokenizer(stream.Options{KeepCase: keepCase, StopWords: stop})
			if err != nil {
				t.Fatal(err)
			}
			got := tok.Tokens(nil, text)
			for _, w := range got {
				if w == "" {
					t.Fatalf("empty token in %q", text)
				}
				if !keepCase && w != strings.ToLower(w) {
					t.Fatalf("token %q of %q is not lower case", w, text)
				}
			}
			if utf8.ValidString(text) {
				want := referenceTokens(text, keepCase, tok.stop)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("stop=%s keepCase=%v: Tokens(%q) = %q, reference %q", stop, keepCase, text, got, want)
				}
			}
		}
		for _, w := range custom.Tokens(nil, text) {
			if w == "" || strings.ContainsAny(w, "\r\n") {
				t.Fatalf("custom pattern token %q", w)
			}
		}
	})
}

// benchText is about 1 MB of mixed-case words, numbers and punctuation, with
// some non-ASCII words, like ordinary English prose.
func benchText() string {
	words := strings.Fields("The quick brown fox jumps over the lazy dog, and 42 Zebras; naïve café Ünïcödé — it's 2024! " +
		"Streaming moment methods recover topics from documents without holding them in memory.")
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		sb.WriteString(words[(i*7+i/13)%len(words)])
		sb.WriteByte(' ')
	}
	return sb.String()
}

func BenchmarkTokenize(b *testing.B) {
	text := benchText()
	for _, bc := range []struct {
		name string
		o    stream.Options
	}{
		{"default", stream.Options{}},
		{"regexp", stream.Options{TokenPattern: `[\p{L}\p{Nd}_]{2,}` + "|" + `[\p{L}\p{Nd}_]{2,}`}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tok, err := NewTokenizer(bc.o)
			if err != nil {
				b.Fatal(err)
			}
			var buf []byte
			n := 0
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				buf = tok.each(text, buf, func(string) { n++ })
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
