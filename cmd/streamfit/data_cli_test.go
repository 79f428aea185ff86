package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/streamfit/streamfit/stream"
)

// Raw text converted without --vocab: a failure leaves neither OUT nor
// OUT.vocab; a success commits both, and the vocabulary reads back.
func TestConvertTextCommitsBothOrNothing(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	lines := strings.Repeat("apple banana cherry\nbanana cherry date\ncherry date apple\n", 10)
	os.WriteFile(p("lines.txt"), []byte(lines), 0o644)

	// An output in a missing directory fails before any pass.
	code, _, errs := streamfit(t, "convert", p("lines.txt"), p("no/dir/out.parquet"), "--progress", "off")
	if code == 0 || !strings.Contains(errs, p("no/dir/out.parquet")) || strings.Contains(errs, ".tmp") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	// An unknown output format fails too, leaving nothing behind.
	if code, _, _ := streamfit(t, "convert", p("lines.txt"), p("out.xyz"), "--progress", "off"); code == 0 {
		t.Fatal("unknown output format accepted")
	}
	// Arrow does not do snappy: the conversion fails after the vocabulary
	// pass, and the vocabulary is not left behind either.
	code, _, errs = streamfit(t, "convert", p("lines.txt"), p("out.arrow"), "--compression", "snappy", "--min-count", "1", "--max-df", "1", "--progress", "off")
	if code == 0 || !strings.Contains(errs, `Arrow compression "snappy" is not one of none, zstd, lz4`) {
		t.Fatalf("snappy Arrow: exit %d, stderr %q", code, errs)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "lines.txt" {
			t.Errorf("failed conversions left %s", e.Name())
		}
	}
	mustRun(t, "convert", p("lines.txt"), p("out.parquet"), "--min-count", "1", "--max-df", "1", "--progress", "off")
	words, err := stream.ReadVocab(p("out.parquet.vocab"))
	if err != nil || len(words) != 4 {
		t.Fatalf("vocabulary %v, %v", words, err)
	}
	var in inspection
	json.Unmarshal([]byte(mustRun(t, "inspect", p("out.parquet"), "--json", "--progress", "off")), &in)
	if in.Rows != 30 || in.Terms != 4 || in.Tokens != 90 {
		t.Fatalf("inspect of the converted text: %+v", in)
	}
}

// Compression defaults: Parquet zstd, Arrow uncompressed (as gen writes it);
// --compression zstd makes a smaller Arrow file.
func TestConvertCompressionDefaults(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "lda", "--docs", "2000", "--vocab", "300", "--k", "3", "--doc-len", "50", "--out", p("g.arrow"), "--progress", "off")
	mustRun(t, "convert", p("g.arrow"), p("c.parquet"), "--progress", "off")
	mustRun(t, "convert", p("c.parquet"), p("c.arrow"), "--progress", "off")
	mustRun(t, "convert", p("c.parquet"), p("z.arrow"), "--compression", "zstd", "--progress", "off")
	size := func(n string) int64 { st, _ := os.Stat(p(n)); return st.Size() }
	if g, c, z := size("g.arrow"), size("c.arrow"), size("z.arrow"); g != c || z*3/2 > c {
		t.Fatalf("Arrow sizes: gen %d, convert default %d, convert zstd %d", g, c, z)
	}
	r, err := file.OpenParquetFile(p("c.parquet"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cc, _ := r.MetaData().RowGroup(0).ColumnChunk(0)
	if cc.Compression() != compress.Codecs.Zstd {
		t.Fatalf("Parquet written with %v, want zstd", cc.Compression())
	}
	_, _, help := streamfit(t, "convert", "-h")
	if !strings.Contains(help, "Arrow none (default), zstd or lz4") {
		t.Fatalf("help does not give the Arrow choices:\n%s", help)
	}
}

// A docword corpus with its UCI vocab.X.txt converts to Parquet keeping the
// words, without --vocab.
func TestConvertDocwordKeepsVocabulary(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	os.WriteFile(p("docword.kos.txt"), []byte("2\n3\n3\n1 1 2\n1 3 1\n2 2 4\n"), 0o644)
	os.WriteFile(p("vocab.kos.txt"), []byte("apple\npear\nplum\n"), 0o644)
	mustRun(t, "convert", p("docword.kos.txt"), p("k.parquet"), "--progress", "off")
	src, err := stream.Open(p("k.parquet"), stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v := src.Info().Vocab; !slices.Equal(v, []string{"apple", "pear", "plum"}) {
		t.Fatalf("Parquet vocabulary %q", v)
	}
	// And back: the docword writer puts vocab.back.txt beside docword.back.txt.
	mustRun(t, "convert", p("k.parquet"), p("docword.back.txt"), "--progress", "off")
	if b, _ := os.ReadFile(p("vocab.back.txt")); string(b) != "apple\npear\nplum\n" {
		t.Fatalf("vocab.back.txt = %q", b)
	}
}

// inspect works on valid input of any shape in bounded memory: one document
// of two billion tokens, raw text without a vocabulary; its schema line
// leaves the vocabulary out.
func TestInspectOddInputs(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	os.WriteFile(p("docword.big.txt"), []byte("3\n4\n4\n1 1 2000000000\n2 2 3\n3 1 70000\n3 4 1\n"), 0o644)
	var in inspection
	if err := json.Unmarshal([]byte(mustRun(t, "inspect", p("docword.big.txt"), "--json", "--progress", "off")), &in); err != nil {
		t.Fatal(err)
	}
	q := in.Lengths
	if q == nil || q.Max != 2000000000 || q.Min != 3 || q.P10 != 3 || !q.Approx || q.P50 > 70001 || q.P50 < 70001*100/105 {
		t.Fatalf("lengths %+v", q)
	}

	os.WriteFile(p("lines.txt"), []byte("The quick brown fox\njumps over the lazy dog dog\n\nhello world\n"), 0o644)
	out := mustRun(t, "inspect", p("lines.txt"), "--progress", "off")
	for _, want := range []string{"text-lines", "rows:      4", "tokens:    9", "vocab build", "median 2", "max 4"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect of raw text lacks %q:\n%s", want, out)
		}
	}

	mustRun(t, "gen", "lda", "--docs", "100", "--vocab", "500", "--k", "2", "--out", p("v.parquet"), "--progress", "off")
	mustRun(t, "convert", p("lines.txt"), p("t.parquet"), "--min-count", "1", "--progress", "off")
	out = mustRun(t, "inspect", p("t.parquet"), "--progress", "off")
	if !strings.Contains(out, "streamfit.vocab=<") || strings.Contains(out, "quick\n") {
		t.Fatalf("schema line:\n%s", out)
	}
}

// gen checks the truth path before generating and never names its
// temporary files.
func TestGenTruthUnwritable(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "c.parquet")
	code, _, errs := streamfit(t, "gen", "lda", "--docs", "100", "--out", out, "--truth", filepath.Join(dir, "missing", "t.json"), "--progress", "off")
	if code == 0 || !strings.Contains(errs, filepath.Join(dir, "missing", "t.json")) || strings.Contains(errs, ".tmp") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left %v", ents)
	}
}
