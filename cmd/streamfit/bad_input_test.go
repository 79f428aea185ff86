package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/streamfit/streamfit/stream"
)

// smallCorpus generates a small LDA corpus (200 documents, 300 words, k=5) in
// dir and returns its path.
func smallCorpus(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	mustRun(t, "gen", "lda", "--docs", "200", "--vocab", "300", "--k", "5", "--doc-len", "50", "--out", path, "--progress", "off")
	return path
}

// An output that is one of the inputs is refused before any work (exit 2),
// whatever name reaches it (the same name, ./name, a hard link), and the
// input is left as it was.
func TestOutputIsInput(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	c := smallCorpus(t, dir, "c.parquet")
	if err := os.Link(c, p("hard.parquet")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("good.txt"), []byte(strings.Repeat("alpha beta gamma delta\n", 50)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		input string
		args  []string
	}{
		{"fit out=input", c, []string{"fit", "lda", "--input", c, "--k", "5", "--out", c}},
		{"fit out=hard link of input", c, []string{"fit", "lda", "--input", c, "--k", "5", "--out", p("hard.parquet")}},
		{"fit topics-parquet=input", c, []string{"fit", "lda", "--input", c, "--k", "5", "--out", p("m.json"), "--topics-parquet", c}},
		{"fit cpuprofile=input", c, []string{"fit", "lda", "--input", c, "--k", "5", "--out", p("m.json"), "--cpuprofile", c}},
		{"stats out=input", c, []string{"stats", "--phase", "1", "--k", "5", "--out", c, c}},
		{"convert out=input", c, []string{"convert", c, p("./c.parquet")}},
		{"vocab build out=input", p("good.txt"), []string{"vocab", "build", "--min-count", "1", "--out", p("good.txt"), p("good.txt")}},
		{"merge out=input", c, []string{"merge", "--out", c, c}},
		{"infer out=input", c, []string{"infer", "--model", p("none.json"), "--input", c, "--out", c}},
		{"infer out=model", c, []string{"infer", "--model", c, "--input", p("good.txt"), "--out", p("hard.parquet")}},
		{"report out=model", c, []string{"report", "--model", c, "--out", c}},
		{"report out=theta", c, []string{"report", "--model", p("none.json"), "--theta", c, "--out", p("hard.parquet")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := readFile(t, tc.input)
			code, _, msg := streamfit(t, tc.args...)
			if code != 2 || !strings.Contains(msg, "is the input") {
				t.Errorf("exit %d, %q; want exit 2 naming the input", code, strings.TrimSpace(msg))
			}
			if !bytes.Equal(readFile(t, tc.input), before) {
				t.Errorf("the input %s was changed", tc.input)
			}
			if _, err := os.Stat(p("m.json")); err == nil {
				t.Errorf("an output was written")
			}
		})
	}
}

// Two outputs on one path are refused before any work (exit 2): neither is
// silently lost, nothing is written.
func TestTwoOutputsOnePath(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	c := smallCorpus(t, dir, "c.parquet")
	if err := os.Symlink("o.json", p("alias.json")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"gen out=truth", []string{"gen", "lda", "--docs", "200", "--vocab", "300", "--k", "5", "--out", p("same.parquet"), "--truth", p("same.parquet")}},
		{"gen dense out=truth", []string{"gen", "gmm", "--rows", "100", "--d", "4", "--k", "2", "--out", p("same.parquet"), "--truth", p("./same.parquet")}},
		{"fit out=topics-parquet", []string{"fit", "lda", "--input", c, "--k", "5", "--out", p("o.json"), "--topics-parquet", p("o.json")}},
		{"fit out=symlink to topics-parquet", []string{"fit", "lda", "--input", c, "--k", "5", "--out", p("o.json"), "--topics-parquet", p("alias.json")}},
		{"fit out=cpuprofile", []string{"fit", "lda", "--input", c, "--k", "5", "--out", p("o.json"), "--cpuprofile", p("o.json")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, msg := streamfit(t, tc.args...)
			if code != 2 || !strings.Contains(msg, "two outputs are one file") {
				t.Errorf("exit %d, %q; want exit 2", code, strings.TrimSpace(msg))
			}
			for _, n := range []string{"same.parquet", "o.json"} {
				if _, err := os.Stat(p(n)); err == nil {
					t.Errorf("%s was written", n)
				}
			}
		})
	}
}

// Every output is checked before the first pass: a missing directory or an
// existing directory fails at once (no plan printed, no pass run) with a
// message naming the output.
func TestOutputsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	c := smallCorpus(t, dir, "c.parquet")
	if err := os.Mkdir(p("d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, want string
		args       []string
	}{
		{"fit out in missing dir", "no such file or directory", []string{"fit", "lda", "--input", c, "--k", "5", "--out", p("nodir/x.json")}},
		{"fit out is a directory", "is a directory", []string{"fit", "lda", "--input", c, "--k", "5", "--out", p("d")}},
		{"fit topics-parquet in missing dir", "no such file or directory", []string{"fit", "lda", "--input", c, "--k", "5", "--out", p("m.json"), "--topics-parquet", p("nodir/t.parquet")}},
		{"fit gmm out is a directory", "is a directory", []string{"fit", "gmm", "--input", c, "--k", "2", "--out", p("d")}},
		{"stats out in missing dir", "no such file or directory", []string{"stats", "--phase", "1", "--k", "5", "--out", p("nodir/s.stats"), c}},
		{"gen out is a directory", "is a directory", []string{"gen", "lda", "--docs", "200", "--vocab", "300", "--k", "5", "--out", p("d")}},
		{"gen dense truth in missing dir", "no such file or directory", []string{"gen", "gmm", "--rows", "100", "--d", "4", "--k", "2", "--out", p("g.parquet"), "--truth", p("nodir/t.json")}},
		{"convert out is a directory", "is a directory", []string{"convert", c, p("d")}},
		{"merge out in missing dir", "no such file or directory", []string{"merge", "--out", p("nodir/a.stats"), c}},
		{"infer out is a directory", "is a directory", []string{"infer", "--model", p("none.json"), "--input", c, "--out", p("d")}},
		{"report out in missing dir", "no such file or directory", []string{"report", "--model", p("none.json"), "--out", p("nodir/r.html")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var msg string
			code, _, m := streamfit(t, tc.args...)
			msg = m
			printed := m
			if code != 1 || !strings.Contains(msg, tc.want) || strings.Contains(msg, "file exists") {
				t.Errorf("exit %d, %q; want exit 1 with %q", code, strings.TrimSpace(msg), tc.want)
			}
			if strings.Contains(printed, "plan:") {
				t.Errorf("the fit was planned before its output was checked:\n%s", printed)
			}
			for _, n := range []string{"m.json", "g.parquet"} {
				if _, err := os.Stat(p(n)); err == nil {
					t.Errorf("%s was written", n)
				}
			}
		})
	}
}

// Flag values outside what they mean are usage errors (exit 2) found before
// any work, never a hang, a panic or a silent default: NaN, ±Inf and 0 for
// the generator's parameters, negative counts, zero batches, unknown names.
func TestBadFlagValues(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	c := smallCorpus(t, dir, "c.parquet")
	gen := func(args ...string) []string {
		return append([]string{"gen", "lda", "--docs", "200", "--vocab", "300", "--k", "5", "--out", p("g.parquet"), "--truth", p("g.json")}, args...)
	}
	fit := func(args ...string) []string {
		return append([]string{"fit", "lda", "--input", c, "--k", "5", "--out", p("m.json")}, args...)
	}
	cases := []struct {
		name, want string
		args       []string
	}{
		{"gen alpha0 NaN", "alpha0", gen("--alpha0", "NaN")},
		{"gen alpha0 Inf", "alpha0", gen("--alpha0", "Inf")},
		{"gen alpha0 0", "alpha0", gen("--alpha0", "0")},
		{"gen beta NaN", "beta", gen("--beta", "NaN")},
		{"gen beta Inf", "beta", gen("--beta", "Inf")},
		{"gen beta 0", "beta", gen("--beta", "0")},
		{"gen doc-len NaN", "doc-len", gen("--doc-len", "NaN")},
		{"gen doc-len Inf", "doc-len", gen("--doc-len", "Inf")},
		{"gen row-group -1", "row-group", gen("--row-group", "-1")},
		{"gen docs 0", "docs", gen("--docs", "0")},
		{"gen unknown extension", "cannot tell the format", []string{"gen", "lda", "--docs", "200", "--vocab", "300", "--k", "5", "--out", p("g.foo")}},
		{"topics top -3", "top", []string{"topics", "--model", p("none.json"), "--top", "-3"}},
		{"topics relevance 1.5", "relevance", []string{"topics", "--model", p("none.json"), "--relevance", "1.5"}},
		{"topics relevance NaN", "relevance", []string{"topics", "--model", p("none.json"), "--relevance", "NaN"}},
		{"vocab show top -3", "top", []string{"vocab", "show", "--top", "-3", c}},
		{"fit workers -1", "workers", fit("--workers", "-1")},
		{"fit batch-rows 0", "batch-rows", fit("--batch-rows", "0")},
		{"fit batch-rows -5", "batch-rows", fit("--batch-rows", "-5")},
		{"fit iters -3", "iters", fit("--iters", "-3")},
		{"fit oversample -4", "oversample", fit("--oversample", "-4")},
		{"fit power-iters -5", "power-iters", fit("--power-iters", "-5")},
		{"fit restarts 0", "restarts", fit("--restarts", "0")},
		{"fit gmm restarts 0", "restarts", []string{"fit", "gmm", "--input", c, "--k", "2", "--out", p("m.json"), "--restarts", "0"}},
		{"stats workers -1", "workers", []string{"stats", "--phase", "1", "--k", "5", "--out", p("s.stats"), "--workers", "-1", c}},
		{"fit format bogus", "bogus", fit("--format", "bogus")},
		{"inspect format bogus", "bogus", []string{"inspect", "--format", "bogus", c}},
		{"fit plan bogus", "plan", fit("--plan", "bogus")},
		{"convert compression lzma", "lzma", []string{"convert", "--compression", "lzma", c, p("x.parquet")}},
		{"convert arrow compression snappy", "snappy", []string{"convert", "--compression", "snappy", c, p("x.arrow")}},
		{"convert docword compression", "compression", []string{"convert", "--compression", "zstd", c, p("docword.x.txt")}},
		{"convert unknown extension", "cannot tell the format", []string{"convert", c, p("x.foo")}},
		{"convert layout weird", "weird", []string{"convert", "--layout", "weird", c, p("x.parquet")}},
		{"fit gmm from-stats with input, no EM passes", "--input", []string{"fit", "gmm", "--input", c, "--k", "2", "--em-passes", "0", "--out", p("m.json"), "--from-stats", c}},
		{"fit from-stats em-passes without input", "--input", []string{"fit", "lda", "--from-stats", c, "--em-passes", "3", "--out", p("m.json")}},
		{"fit em-passes -1", "em-passes", fit("--em-passes", "-1")},
		{"fit em-tol 0", "em-tol", fit("--em-tol", "0")},
		{"fit em-tol -1", "em-tol", fit("--em-tol", "-1")},
		{"fit em-tol NaN", "em-tol", fit("--em-tol", "NaN")},
		{"fit als-sweeps -1", "als-sweeps", fit("--als-sweeps", "-1")},
		{"fit em bogus", "--em", fit("--em", "bogus")},
		{"fit em-kappa 0.5", "em-kappa", fit("--em", "online", "--em-kappa", "0.5")},
		{"fit em-kappa 1.5", "em-kappa", fit("--em", "online", "--em-kappa", "1.5")},
		{"fit em-kappa NaN", "em-kappa", fit("--em", "online", "--em-kappa", "NaN")},
		{"fit em-tau0 -1", "em-tau0", fit("--em", "online", "--em-tau0", "-1")},
		{"fit em-minibatch 0", "em-minibatch", fit("--em", "online", "--em-minibatch", "0")},
		{"fit em-kappa with batch", "em-kappa", fit("--em-kappa", "0.7")},
		{"vocab build min-df -1", "min-df", []string{"vocab", "build", "--min-df", "-1", "--out", p("v.txt"), c}},
		{"eval alpha 0", "alpha", []string{"eval", "--model", p("none.json"), "--coherence", c, "--alpha", "0"}},
		{"eval top 0", "top", []string{"eval", "--model", p("none.json"), "--coherence", c, "--top", "0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := runWithin(t, 30*time.Second, tc.args...)
			if code != 2 || !strings.Contains(msg, tc.want) {
				t.Errorf("exit %d, %q; want exit 2 naming %q", code, strings.TrimSpace(msg), tc.want)
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if n := e.Name(); n != "c.parquet" {
					t.Errorf("left %s behind", n)
					os.Remove(p(n))
				}
			}
		})
	}
}

// runWithin runs streamfit and fails the test, instead of hanging it, when
// the command does not end within limit.
func runWithin(t *testing.T, limit time.Duration, args ...string) (int, string) {
	t.Helper()
	type result struct {
		code int
		msg  string
	}
	done := make(chan result, 1)
	go func() {
		var errb bytes.Buffer
		code := run(context.Background(), args, &errb)
		done <- result{code, errb.String()}
	}()
	select {
	case r := <-done:
		return r.code, r.msg
	case <-time.After(limit):
		t.Fatalf("streamfit %s did not end within %v", strings.Join(args, " "), limit)
		return 0, ""
	}
}

// writeTermsParquet writes documents as a Parquet table of term-id and count
// lists with no vocabulary metadata (as another tool would), with column
// statistics.
func writeTermsParquet(t *testing.T, path string, docs [][]int32) {
	t.Helper()
	mem := memory.NewGoAllocator()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "terms", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)},
		{Name: "counts", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	tl, cl := b.Field(0).(*array.ListBuilder), b.Field(1).(*array.ListBuilder)
	for _, d := range docs {
		tl.Append(true)
		cl.Append(true)
		for _, term := range d {
			tl.ValueBuilder().(*array.Int32Builder).Append(term)
			cl.ValueBuilder().(*array.Int32Builder).Append(2)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	writeRecordParquet(t, path, rec)
}

// writeRecordParquet writes rec as a Parquet file, as another tool would
// (no streamfit metadata).
func writeRecordParquet(t *testing.T, path string, rec arrow.RecordBatch) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err == nil {
		err = w.Write(rec)
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Bad data is an error (exit 1) whose message names the file and says what
// is wrong, never a crash, a silent clip or output made of garbage; nothing
// is left behind.
func TestBadData(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	c := smallCorpus(t, dir, "c.parquet")
	mustRun(t, "convert", c, p("docword.c.txt.gz"))
	raw, err := os.ReadFile(p("docword.c.txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		raw[len(raw)/2+i] ^= 0x5a
	}
	write := func(name string, b []byte) string {
		if err := os.WriteFile(p(name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p(name)
	}
	damaged := write("docword.bad.txt.gz", raw)
	vocab := write("v.txt", []byte("alpha\nbeta\ngamma\ndelta\n"))
	short := write("short.txt", []byte(strings.Repeat("alpha beta\n", 100)))
	blank := write("blank.txt", []byte(strings.Repeat("\n", 100)))
	rnd := make([]byte, 1<<20)
	for i := range rnd {
		rnd[i] = byte(i*7919 + i>>8*31)
	}
	random := write("random.txt", rnd)
	huge := p("huge.parquet")
	writeTermsParquet(t, huge, [][]int32{{1, 2, 3}, {4, 5, 2000000000}})
	big := p("big.parquet")
	writeTermsParquet(t, big, [][]int32{{1, 2, 3}, {4, 5, 200000000}})

	for _, tc := range []struct {
		name string
		want []string
		args []string
	}{
		{"fit on a stray term id 2e9", []string{"huge.parquet", "largest term id is 2000000000", "--vocab"}, []string{"fit", "lda", "--input", huge, "--k", "2", "--out", p("m.json")}},
		{"fit on a stray term id 2e8", []string{"big.parquet", "largest term id is 200000000", "--vocab"}, []string{"fit", "lda", "--input", big, "--k", "2", "--out", p("m.json")}},
		{"convert a stray term id 2e9", []string{"huge.parquet", "largest term id"}, []string{"convert", huge, p("x.parquet")}},
		{"stats docs past the end", []string{"c.parquet", "has 200 documents", "1500:99999"}, []string{"stats", "--phase", "1", "--k", "5", "--docs", "1500:99999", "--out", p("s.stats"), c}},
		{"stats docs starting past the end", []string{"has 200 documents", "300:"}, []string{"stats", "--phase", "1", "--k", "5", "--docs", "300:", "--out", p("s.stats"), c}},
		{"vocab build on random bytes", []string{"random.txt", "line", "binary data"}, []string{"vocab", "build", "--out", p("rv.txt"), random}},
		{"fit on all-short documents", []string{"short.txt", "no usable documents"}, []string{"fit", "lda", "--input", short, "--vocab", vocab, "--k", "2", "--out", p("m.json")}},
		{"fit on empty lines", []string{"blank.txt", "no usable documents"}, []string{"fit", "lda", "--input", blank, "--vocab", vocab, "--k", "2", "--out", p("m.json")}},
		{"fit on damaged gzip", []string{"docword.bad.txt.gz", ": byte ", "damaged compressed data"}, []string{"fit", "lda", "--input", damaged, "--k", "5", "--out", p("m.json")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := runWithin(t, 60*time.Second, tc.args...)
			if code != 1 {
				t.Errorf("exit %d, %q; want exit 1", code, strings.TrimSpace(msg))
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not say %q", strings.TrimSpace(msg), w)
				}
			}
			if strings.Contains(msg, "line 7") || strings.Contains(msg, "line 8") {
				t.Errorf("message %q names a line past the end of the data", msg)
			}
			for _, n := range []string{"m.json", "x.parquet", "s.stats", "rv.txt"} {
				if _, err := os.Stat(p(n)); err == nil {
					t.Errorf("%s was written", n)
				}
			}
		})
	}
}

// Temporary files that a killed gen or convert left beside its output
// (".NAME.tmp-*", ".NAME.body-*") are removed by the next write of the same
// output once they are older than stream.StaleTemp; fresh ones, which may
// belong to a run still going, are kept.
func TestStaleTempsRemoved(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	old := time.Now().Add(-2 * stream.StaleTemp)
	leave := func(name string, age time.Time) string {
		if err := os.WriteFile(p(name), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p(name), age, age); err != nil {
			t.Fatal(err)
		}
		return p(name)
	}
	for _, tc := range []struct {
		name string
		temp []string // stale temporary files of the output
		args []string
	}{
		{"gen parquet", []string{".c.parquet.tmp-111", ".c.parquet.tmp-222"}, []string{"gen", "lda", "--docs", "200", "--vocab", "300", "--k", "5", "--out", p("c.parquet")}},
		{"gen docword", []string{".docword.g.txt.gz.body-111", ".docword.g.txt.gz.tmp-111"}, []string{"gen", "lda", "--docs", "200", "--vocab", "300", "--k", "5", "--out", p("docword.g.txt.gz"), "--truth", p("t.json")}},
		{"gen truth", []string{".t2.json.tmp-333"}, []string{"gen", "lda", "--docs", "200", "--vocab", "300", "--k", "5", "--out", p("d.parquet"), "--truth", p("t2.json")}},
		{"convert docword", []string{".docword.x.txt.body-111", ".docword.x.txt.tmp-999"}, []string{"convert", p("c.parquet"), p("docword.x.txt")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stale []string
			for _, n := range tc.temp {
				stale = append(stale, leave(n, old))
			}
			fresh := leave(tc.temp[0]+"fresh", time.Now())
			mustRun(t, tc.args...)
			for _, s := range stale {
				if _, err := os.Stat(s); err == nil {
					t.Errorf("stale %s was not removed", filepath.Base(s))
				}
			}
			if _, err := os.Stat(fresh); err != nil {
				t.Errorf("a fresh temporary file was removed: %v", err)
			}
			os.Remove(fresh)
		})
	}
}

// The same input and seed give a byte-identical model.json whatever the
// number of workers, for every representation of the third moment (the
// sketch summed its vocabulary parts per worker).
func TestPlanDeterministicAcrossWorkers(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "lda", "--docs", "2000", "--vocab", "300", "--k", "5", "--doc-len", "50", "--out", p("c.parquet"))
	for _, plan := range []string{"sketch", "explicit", "implicit"} {
		t.Run(plan, func(t *testing.T) {
			var first []byte
			for _, w := range []string{"1", "2", "3"} {
				out := p(plan + w + ".json")
				mustRun(t, "fit", "lda", "--input", p("c.parquet"), "--k", "5", "--plan", plan, "--workers", w, "--no-timing", "--out", out)
				b := readFile(t, out)
				if first == nil {
					first = b
				} else if !bytes.Equal(b, first) {
					t.Fatalf("--plan %s --workers %s gives another model.json than --workers 1", plan, w)
				}
			}
		})
	}
}

// Damaged data pages of a Parquet file streamfit wrote are an error whatever
// the compression: each row group carries a CRC-32C of its stored bytes
// (before, a damaged page of an uncompressed or snappy file changed a
// document's term ids and the fit went on).
func TestParquetDamagedPages(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	c := smallCorpus(t, dir, "c.parquet")
	for _, comp := range []string{"none", "snappy", "gzip", "zstd"} {
		t.Run(comp, func(t *testing.T) {
			good := p(comp + ".parquet")
			mustRun(t, "convert", c, good, "--compression", comp, "--row-group", "50")
			mustRun(t, "fit", "lda", "--input", good, "--k", "5", "--out", p("m.json"))
			b := readFile(t, good)
			for i := range 4 {
				b[len(b)/3+i] ^= 0x5a // inside the row groups: the footer is at the end
			}
			bad := p(comp + ".bad.parquet")
			if err := os.WriteFile(bad, b, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"fit", "lda", "--input", bad, "--k", "5", "--out", p("bad.json")},
				{"inspect", bad},
				{"convert", bad, p("x.parquet")},
			} {
				code, _, msg := streamfit(t, args...)
				if code != 1 || !strings.Contains(msg, comp+".bad.parquet") || !strings.Contains(msg, "damaged") {
					t.Errorf("%s on a damaged %s file: exit %d, %q", args[0], comp, code, strings.TrimSpace(msg))
				}
			}
			for _, n := range []string{"bad.json", "x.parquet"} {
				if _, err := os.Stat(p(n)); err == nil {
					t.Errorf("%s was written", n)
				}
			}
		})
	}
}

// Ctrl-C during the final compress-and-copy of a docword output (the body is
// written first, then copied behind its header through gzip, which takes
// seconds on a large file) stops the command: exit 1, no output, no
// temporary file.
func TestConvertCancelledInFinalCopy(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "lda", "--docs", "25000", "--vocab", "2000", "--k", "5", "--doc-len", "150", "--out", p("c.parquet"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// The final copy starts when the output's temporary file appears.
		for ctx.Err() == nil {
			if m, _ := filepath.Glob(p(".docword.x.txt.gz.tmp-*")); len(m) > 0 {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	var errb bytes.Buffer
	code := run(ctx, []string{"convert", p("c.parquet"), p("docword.x.txt.gz")}, &errb)
	if code != 1 || !strings.Contains(errb.String(), "canceled") {
		t.Fatalf("convert cancelled in its final copy: exit %d, %q", code, strings.TrimSpace(errb.String()))
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "c.parquet" {
			t.Errorf("left %s behind", e.Name())
		}
	}
}
