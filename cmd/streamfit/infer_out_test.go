package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamfit/streamfit/models/gmm"
)

// shareOutput are the rows of an infer output read back: each document's
// index, id and shares, or with --top its (topic, share) rows.
type shareOutput struct {
	docs   []int64
	ids    []string
	shares [][]float64
}

// readShareParquet reads an infer output in Parquet; with top, each row is
// one (doc, id, unit, share) whose unit and share are stored as shares
// [unit, share].
func readShareParquet(t *testing.T, path string, top bool) shareOutput {
	t.Helper()
	_, tbl := readParquetTable(t, path)
	var r shareOutput
	col := func(i int) []any {
		var out []any
		for _, ch := range tbl.Column(i).Data().Chunks() {
			for j := range ch.Len() {
				switch a := ch.(type) {
				case *array.Int64:
					out = append(out, a.Value(j))
				case *array.Int32:
					out = append(out, float64(a.Value(j)))
				case *array.String:
					out = append(out, a.Value(j))
				case *array.Float64:
					out = append(out, a.Value(j))
				case *array.List:
					lo, hi := a.ValueOffsets(j)
					out = append(out, slices.Clone(a.ListValues().(*array.Float64).Float64Values()[lo:hi]))
				}
			}
		}
		return out
	}
	for _, v := range col(0) {
		r.docs = append(r.docs, v.(int64))
	}
	next := 1
	if tbl.NumCols() == 3 && !top || tbl.NumCols() == 4 {
		for _, v := range col(1) {
			r.ids = append(r.ids, v.(string))
		}
		next = 2
	}
	if top {
		units, shares := col(next), col(next+1)
		for i := range units {
			r.shares = append(r.shares, []float64{units[i].(float64), shares[i].(float64)})
		}
		return r
	}
	for _, v := range col(next) {
		r.shares = append(r.shares, v.([]float64))
	}
	return r
}

// parseShareText parses an infer output in CSV, TSV or JSON Lines, with
// an id column when ids; with top, shares are [unit, share] as in
// readShareParquet.
func parseShareText(t *testing.T, data []byte, format string, ids, top bool) shareOutput {
	t.Helper()
	var r shareOutput
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		return v
	}
	if format == "jsonl" {
		for line := range strings.Lines(string(data)) {
			var row struct {
				Doc   int64     `json:"doc"`
				ID    *string   `json:"id"`
				Theta []float64 `json:"theta"`
				Topic *int      `json:"topic"`
				Share float64   `json:"share"`
			}
			dec := json.NewDecoder(strings.NewReader(line))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&row); err != nil {
				t.Fatalf("jsonl line %q: %v", line, err)
			}
			r.docs = append(r.docs, row.Doc)
			if (row.ID != nil) != ids || (row.Topic != nil) != top {
				t.Fatalf("jsonl line %q: id or topic missing or unexpected", line)
			}
			if ids {
				r.ids = append(r.ids, *row.ID)
			}
			if top {
				r.shares = append(r.shares, []float64{float64(*row.Topic), row.Share})
			} else {
				r.shares = append(r.shares, row.Theta)
			}
		}
		return r
	}
	cr := csv.NewReader(bytes.NewReader(data))
	if format == "tsv" {
		cr.Comma = '\t'
	}
	recs, err := cr.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	head := recs[0]
	if (head[0] != "doc" && head[0] != "row") || (head[1] == "id") != ids {
		t.Fatalf("%s header %q", format, head)
	}
	for _, rec := range recs[1:] {
		r.docs = append(r.docs, int64(num(rec[0])))
		rec = rec[1:]
		if ids {
			r.ids = append(r.ids, rec[0])
			rec = rec[1:]
		}
		var s []float64
		for _, v := range rec {
			s = append(s, num(v))
		}
		r.shares = append(r.shares, s)
	}
	return r
}

func equalRows(a, b shareOutput) bool {
	return slices.Equal(a.docs, b.docs) && slices.Equal(a.ids, b.ids) &&
		slices.EqualFunc(a.shares, b.shares, func(x, y []float64) bool { return slices.Equal(x, y) })
}

// infer writes CSV, TSV and JSON Lines by the extension of --out, and CSV
// (or --out-format) to standard output, each with the same numbers and ids
// as the Parquet output, exactly; --top N writes each document's N largest
// shares, largest first; an extension that names no format is a usage
// error that creates no file.
func TestInferOutputFormats(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	docs := idDocs(240)
	names := make([]string, len(docs))
	for i := range names {
		names[i] = `doc "` + strconv.Itoa(i) + `", x` // quotes and a comma: CSV must quote them
	}
	writeIDTable(t, p("docs.parquet"), docs, names, nil, nil, false)
	mustRun(t, "fit", "lda", "--input", p("docs.parquet"), "--k", "2", "--em-passes", "2", "--progress", "off", "--out", p("m.json"))
	infer := func(args ...string) string {
		t.Helper()
		return mustRun(t, append([]string{"infer", "--model", p("m.json"), "--input", p("docs.parquet"), "--id-column", "name", "--batch-rows", "50", "--progress", "off"}, args...)...)
	}
	infer("--out", p("ref.parquet"))
	ref := readShareParquet(t, p("ref.parquet"), false)
	if len(ref.docs) != len(docs) || !slices.Equal(ref.ids, names) {
		t.Fatalf("reference: %d rows, ids %q…", len(ref.docs), ref.ids[:2])
	}
	for _, c := range []struct{ name, format string }{
		{"theta.csv", "csv"}, {"theta.tsv", "tsv"}, {"theta.jsonl", "jsonl"}, {"theta.ndjson", "jsonl"}, {"THETA.CSV", "csv"},
	} {
		infer("--out", p(c.name))
		data, err := os.ReadFile(p(c.name))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.HasPrefix(data, []byte("PAR1")) {
			t.Fatalf("%s holds Parquet", c.name)
		}
		if got := parseShareText(t, data, c.format, true, false); !equalRows(got, ref) {
			t.Errorf("%s: the rows differ from the Parquet output's", c.name)
		}
	}
	if got := parseShareText(t, []byte(infer("--out", "-")), "csv", true, false); !equalRows(got, ref) {
		t.Errorf("--out -: the CSV on standard output differs from the Parquet output")
	}
	if got := parseShareText(t, []byte(infer("--out", "-", "--out-format", "jsonl")), "jsonl", true, false); !equalRows(got, ref) {
		t.Errorf("--out - --out-format jsonl differs from the Parquet output")
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error("--out - created a file named -")
	}

	// --top: the N largest of each document's shares, largest first.
	want := func(n int) shareOutput {
		var w shareOutput
		for i, s := range ref.shares {
			idx := []int{0, 1}
			slices.SortStableFunc(idx, func(a, b int) int {
				switch {
				case s[a] > s[b]:
					return -1
				case s[a] < s[b]:
					return 1
				}
				return 0
			})
			for _, j := range idx[:min(n, len(idx))] {
				w.docs = append(w.docs, ref.docs[i])
				w.ids = append(w.ids, ref.ids[i])
				w.shares = append(w.shares, []float64{float64(j), s[j]})
			}
		}
		return w
	}
	for _, n := range []int{1, 2, 3} {
		top := strconv.Itoa(n)
		if got := parseShareText(t, []byte(infer("--out", "-", "--top", top)), "csv", true, true); !equalRows(got, want(n)) {
			t.Errorf("--top %d to standard output: not each document's %d largest shares in order", n, n)
		}
		infer("--out", p("top.parquet"), "--top", top)
		if got := readShareParquet(t, p("top.parquet"), true); !equalRows(got, want(n)) {
			t.Errorf("--top %d as Parquet: not each document's %d largest shares in order", n, n)
		}
		infer("--out", p("top.jsonl"), "--top", top)
		data, _ := os.ReadFile(p("top.jsonl"))
		if got := parseShareText(t, data, "jsonl", true, true); !equalRows(got, want(n)) {
			t.Errorf("--top %d as JSON Lines: not each document's %d largest shares in order", n, n)
		}
	}
	// Without --id-column, no id column.
	out := mustRun(t, "infer", "--model", p("m.json"), "--input", p("docs.parquet"), "--progress", "off", "--out", "-", "--out-format", "tsv", "--top", "1")
	if got := parseShareText(t, []byte(out), "tsv", false, true); len(got.docs) != len(docs) || got.ids != nil {
		t.Errorf("--top 1 without ids: %d rows, ids %v", len(got.docs), got.ids != nil)
	}

	for _, args := range [][]string{
		{"--out", p("theta.txt")},
		{"--out", p("theta")},
		{"--out", p("theta.csv"), "--out-format", "xml"},
		{"--out", p("theta.csv"), "--top", "-1"},
	} {
		os.Remove(p("theta.csv"))
		code, _, errs := streamfit(t, append([]string{"infer", "--model", p("m.json"), "--input", p("docs.parquet"), "--progress", "off"}, args...)...)
		if code != 2 {
			t.Errorf("infer %q: exit %d, want 2 (%s)", args, code, errs)
		}
		if args[1] == p("theta.txt") && !strings.Contains(errs, ".csv") {
			t.Errorf("an unknown extension's error does not name the known ones: %s", errs)
		}
		if _, err := os.Stat(args[1]); err == nil {
			t.Errorf("infer %q created %s", args, args[1])
		}
	}
}

// Raw text without --vocab is tokenized against the vocabulary model.json
// holds: the same shares as with the vocabulary file; a model without one
// asks for --vocab.
func TestInferModelVocabulary(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	var train strings.Builder
	for i := range 60 {
		if i%2 == 0 {
			train.WriteString("engine motor wheel car road drive " + strconv.Itoa(i%7) + "\n")
		} else {
			train.WriteString("apple banana cherry fruit salad apple\n")
		}
	}
	os.WriteFile(p("train.txt"), []byte(train.String()), 0o644)
	os.WriteFile(p("test.txt"), []byte("car engine apple\nbanana fruit fruit\nroad wheel motor cherry\n"), 0o644)
	mustRun(t, "vocab", "build", "--min-count", "1", "--max-df", "1", "--out", p("vocab.txt"), p("train.txt"))
	mustRun(t, "fit", "lda", "--input", p("train.txt"), "--vocab", p("vocab.txt"), "--k", "2", "--progress", "off", "--out", p("m.json"))
	with := mustRun(t, "infer", "--model", p("m.json"), "--input", p("test.txt"), "--vocab", p("vocab.txt"), "--progress", "off", "--out", "-")
	without := mustRun(t, "infer", "--model", p("m.json"), "--input", p("test.txt"), "--progress", "off", "--out", "-")
	if with != without || strings.Count(with, "\n") != 4 {
		t.Errorf("without --vocab:\n%s\nwith the model's vocabulary file:\n%s", without, with)
	}

	var m map[string]any
	b, _ := os.ReadFile(p("m.json"))
	json.Unmarshal(b, &m)
	delete(m, "vocab")
	b, _ = json.Marshal(m)
	os.WriteFile(p("bare.json"), b, 0o644)
	code, _, errs := streamfit(t, "infer", "--model", p("bare.json"), "--input", p("test.txt"), "--progress", "off", "--out", p("bare.csv"))
	if code != 1 || !strings.Contains(errs, "--vocab") {
		t.Errorf("a model without a vocabulary on raw text: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(p("bare.csv")); err == nil {
		t.Error("a failed infer left its output")
	}
}

// infer on a Gaussian mixture gives each row its component
// responsibilities: equal to the posterior computed here by Bayes' rule
// from the model's weights, means and variances, each row summing to 1;
// --top 1 is the most probable component. A model whose rows have no
// shares is refused, naming its kind.
func TestInferGMMResponsibilities(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "gmm", "--rows", "700", "--d", "3", "--k", "3", "--differing", "--seed", "4", "--out", p("x.parquet"), "--truth", p("truth.json"), "--progress", "off")
	mustRun(t, "infer", "--model", p("truth.json"), "--input", p("x.parquet"), "--batch-rows", "100", "--progress", "off", "--out", p("r.csv"))
	data, _ := os.ReadFile(p("r.csv"))
	if !strings.HasPrefix(string(data), "row,component_0,component_1,component_2\n") {
		t.Fatalf("header %q", strings.SplitN(string(data), "\n", 2)[0])
	}
	got := parseShareRows(t, data)

	m, err := gmm.Read(p("truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, tbl := readParquetTable(t, p("x.parquet"))
	var xs [][]float64
	for _, ch := range tbl.Column(0).Data().Chunks() {
		l := ch.(*array.FixedSizeList)
		vals := l.ListValues().(*array.Float64).Float64Values()
		for i := range l.Len() {
			lo, hi := l.ValueOffsets(i)
			xs = append(xs, vals[lo:hi])
		}
	}
	if len(xs) != 700 || len(got) != 700 {
		t.Fatalf("%d rows in, %d out; want 700", len(xs), len(got))
	}
	// The brute-force posterior, without logarithms: with d = 3 and unit
	// scale no density underflows. Both sides round differently (the
	// command works in logarithms), so they agree to a few ulps of 1.
	const tol = 1e-12
	for r, x := range xs {
		dens := make([]float64, m.K)
		sum := 0.0
		for i := range m.K {
			d2 := 0.0
			for j := range x {
				d2 += (x[j] - m.Means[i][j]) * (x[j] - m.Means[i][j])
			}
			v := m.Variances[i]
			dens[i] = m.Weights[i] * math.Pow(2*math.Pi*v, -float64(m.D)/2) * math.Exp(-d2/(2*v))
			sum += dens[i]
		}
		rowSum := 0.0
		for i := range m.K {
			rowSum += got[r][i]
			if math.Abs(got[r][i]-dens[i]/sum) > tol {
				t.Fatalf("row %d component %d: %g, Bayes' rule gives %g", r, i, got[r][i], dens[i]/sum)
			}
		}
		if math.Abs(rowSum-1) > tol {
			t.Fatalf("row %d sums to %g", r, rowSum)
		}
	}
	top := mustRun(t, "infer", "--model", p("truth.json"), "--input", p("x.parquet"), "--progress", "off", "--out", "-", "--top", "1")
	lines := strings.Split(strings.TrimSpace(top), "\n")
	if lines[0] != "row,component,share" || len(lines) != 701 {
		t.Fatalf("--top 1: header %q, %d lines", lines[0], len(lines))
	}
	for r, line := range lines[1:] {
		f := strings.Split(line, ",")
		c, _ := strconv.Atoi(f[1])
		if f[0] != strconv.Itoa(r) || got[r][c] != slices.Max(got[r]) {
			t.Fatalf("--top 1 row %q: not the most probable component of row %d (%v)", line, r, got[r])
		}
	}

	// A fitted mixture infers too; an ICA model has no shares.
	mustRun(t, "fit", "gmm", "--input", p("x.parquet"), "--k", "3", "--differing", "--progress", "off", "--out", p("fit.json"))
	mustRun(t, "infer", "--model", p("fit.json"), "--input", p("x.parquet"), "--progress", "off", "--out", p("fit.jsonl"))
	mustRun(t, "gen", "ica", "--rows", "200", "--d", "3", "--k", "3", "--out", p("ica.parquet"), "--truth", p("ica.json"), "--progress", "off")
	code, _, errs := streamfit(t, "infer", "--model", p("ica.json"), "--input", p("ica.parquet"), "--progress", "off", "--out", p("ica.csv"))
	if code != 1 || !strings.Contains(errs, "ica model") {
		t.Errorf("infer with an ICA model: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(p("ica.csv")); err == nil {
		t.Error("a refused infer created its output")
	}
}

// parseShareRows parses a CSV of shares without ids: one row of k shares
// per item, the item index first.
func parseShareRows(t *testing.T, data []byte) [][]float64 {
	t.Helper()
	r := parseShareText(t, data, "csv", false, false)
	for i, d := range r.docs {
		if d != int64(i) {
			t.Fatalf("row %d has index %d", i, d)
		}
	}
	return r.shares
}
