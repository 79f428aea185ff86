package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/stream"
	_ "github.com/streamfit/streamfit/stream/columnar"
)

// writeThetaParquet writes rows of shares as a Parquet table with a "doc"
// int64 column and either one float64 column per topic or, with list, one
// "theta" list<double> column (the layout of `streamfit infer`).
func writeThetaParquet(t *testing.T, path string, rows [][]float64, list bool) {
	t.Helper()
	k := len(rows[0])
	fields := []arrow.Field{{Name: "doc", Type: arrow.PrimitiveTypes.Int64}}
	if list {
		fields = append(fields, arrow.Field{Name: "theta", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)})
	} else {
		for i := range k {
			fields = append(fields, arrow.Field{Name: fmt.Sprintf("topic_%d", i), Type: arrow.PrimitiveTypes.Float64})
		}
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	for i, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(1000 + i))
		if list {
			lb := b.Field(1).(*array.ListBuilder)
			lb.Append(true)
			lb.ValueBuilder().(*array.Float64Builder).AppendValues(r, nil)
			continue
		}
		for j, x := range r {
			b.Field(j + 1).(*array.Float64Builder).Append(x)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(schema, f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReadTheta checks the dominant-topic counts and mean shares against a
// direct count, for the columns layout with a "doc" id and for the list
// layout the dense writer makes, and the errors of bad tables.
func TestReadTheta(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const k, n = 4, 5000
	rows := make([][]float64, n)
	wantDom := make([]float64, k)
	wantMean := make([]float64, k)
	for i := range rows {
		row := make([]float64, k)
		var s float64
		for j := range row {
			row[j] = r.ExpFloat64() * float64(j+1)
			s += row[j]
		}
		best := 0
		for j := range row {
			row[j] /= s
			wantMean[j] += row[j] / n
			if row[j] > row[best] {
				best = j
			}
		}
		wantDom[best]++
		rows[i] = row
	}
	dir := t.TempDir()
	cols := filepath.Join(dir, "theta.parquet")
	writeThetaParquet(t, cols, rows, false)
	infer := filepath.Join(dir, "theta-infer.parquet")
	writeThetaParquet(t, infer, rows, true)
	list := filepath.Join(dir, "theta-list.parquet")
	w, err := stream.CreateDense(list, stream.WriteOptions{RowGroupRows: 700})
	if err != nil {
		t.Fatal(err)
	}
	batch := &stream.Dense{Cols: k}
	for i, row := range rows {
		batch.AppendRow(row)
		batch.Group = append(batch.Group, int64(i))
	}
	if err := w.Write(batch); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{cols, infer, list} {
		for _, workers := range []int{1, 3} {
			th, err := ReadTheta(context.Background(), path, "", k, workers)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if th.Docs != n {
				t.Errorf("%s: %d documents, want %d", path, th.Docs, n)
			}
			for j := range k {
				if th.Dominant[j] != wantDom[j] || math.Abs(th.Mean[j]-wantMean[j]) > 1e-12 {
					t.Errorf("%s topic %d: %g dominant, mean %g; want %g, %g", path, j, th.Dominant[j], th.Mean[j], wantDom[j], wantMean[j])
				}
			}
		}
	}
	for _, path := range []string{cols, infer} {
		if _, err := ReadTheta(context.Background(), path, "", k+1, 0); err == nil || !strings.Contains(err.Error(), "4 topic shares per document but the model has k=5") {
			t.Errorf("%s, wrong k: %v", path, err)
		}
	}
	rows[17][2] = -0.5
	bad := filepath.Join(dir, "bad.parquet")
	writeThetaParquet(t, bad, rows, true)
	if _, err := ReadTheta(context.Background(), bad, "", k, 0); err == nil || !strings.Contains(err.Error(), "row 17, column 2") {
		t.Errorf("negative share: %v", err)
	}
}

// TestEvalFile reads the shapes of evaluation files the page accepts.
func TestEvalFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "eval.json")
	os.WriteFile(path, []byte(`{"perplexity": 934.5, "heldout": {"docs": 600},
		"coherence": {"umass": [-1, -2, -3], "npmi": [0.1, null, 0.3]},
		"topics": [{"umass": 1, "label": "a"}, {"umass": 2}, {"umass": 3, "npmi": 0.5}],
		"diversity": 0.8, "per_doc": [1, 2, 3, 4, 5], "name": "x"}`), 0o644)
	d := &Data{Topics: &TopicView{}}
	if err := evalFigures(d, path, "", 3, true); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range d.Topics.Figures {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ", "); got != "coherence: NPMI coherence, coherence: UMass coherence, topics: NPMI coherence, topics: UMass coherence" {
		t.Errorf("figures %q", got)
	}
	if v := d.Topics.Figures[0].Value; !math.IsNaN(float64(v[1])) || v[2] != 0.3 {
		t.Errorf("coherence.npmi = %v", v)
	}
	if v := d.Topics.Figures[2].Value; !math.IsNaN(float64(v[0])) || v[2] != 0.5 {
		t.Errorf("topics.npmi = %v", v)
	}
	prov := fmt.Sprint(d.Provenance)
	for _, want := range []string{"evaluation (eval.json): perplexity 934.5", "evaluation (eval.json): heldout: documents 600", "evaluation (eval.json): topic diversity 0.8"} {
		if !strings.Contains(prov, want) {
			t.Errorf("provenance %s lacks %q", prov, want)
		}
	}
	// The scores a person looks for, in the page's order, whatever the file's.
	var scores []string
	for _, s := range d.Scores {
		scores = append(scores, fmt.Sprintf("%s %v (%s)", s.Name, s.Value, s.Source))
	}
	if got, want := strings.Join(scores, "; "), "held-out perplexity 934.5 (eval.json); topic diversity 0.8 (eval.json)"; got != want {
		t.Errorf("scores %q, want %q", got, want)
	}
	if len(d.Notes) != 1 || !strings.Contains(d.Notes[0], "per_doc (5 values)") {
		t.Errorf("notes %q", d.Notes)
	}
	os.WriteFile(path, []byte(`[1, 2]`), 0o644)
	if err := evalFigures(d, path, "", 3, true); err == nil || !strings.Contains(err.Error(), "not an evaluation file") {
		t.Errorf("an array: %v", err)
	}
}

// TestBuildRefuses checks the errors of Build: an unknown model, companion
// files that do not apply, a vocabulary of the wrong size, a broken file.
func TestBuildRefuses(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	unknown := filepath.Join(dir, "u.json")
	os.WriteFile(unknown, []byte(`{"model": "crf", "k": 2}`), 0o644)
	if _, err := Build(ctx, unknown, Options{}); err == nil || !strings.Contains(err.Error(), `a "crf" model: no report knows how to show it`) {
		t.Errorf("unknown model: %v", err)
	}
	g := &gmm.Model{Model: "gmm", K: 1, D: 2, Weights: []float64{1}, Means: [][]float64{{0, 1}}, Variances: []float64{1}}
	gp := filepath.Join(dir, "g.json")
	if err := g.Write(gp); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(ctx, gp, Options{ThetaPath: "theta.parquet"}); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("theta for a gmm: %v", err)
	}
	m := &models.Model{Model: "lda", K: 2, D: 3, Alpha0: 1, Alpha: []float64{0.5, 0.5}, Topics: [][]float64{{0.5, 0.5, 0}, {0, 0.5, 0.5}}}
	mp := filepath.Join(dir, "m.json")
	if err := m.Write(mp); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(ctx, mp, Options{Vocab: []string{"a", "b"}}); err == nil || !strings.Contains(err.Error(), "2 words but the model has d=3") {
		t.Errorf("short vocabulary: %v", err)
	}
	d, err := Build(ctx, mp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Notes) != 2 || !strings.Contains(strings.Join(d.Notes, " "), "term ids") {
		t.Errorf("a truth-like model without vocabulary: notes %q", d.Notes)
	}
	broken := filepath.Join(dir, "b.json")
	os.WriteFile(broken, []byte(`{"model": "lda", "k": 2, "topics": [[0.5`), 0o644)
	if _, err := Build(ctx, broken, Options{}); err == nil || !strings.Contains(err.Error(), "b.json") {
		t.Errorf("truncated model: %v", err)
	}
	// Write leaves no file behind when it cannot render.
	out := filepath.Join(dir, "r.html")
	if err := Write(out, &Data{Topics: &TopicView{Lambda: math.Inf(1)}}); err == nil {
		t.Error("an unencodable page was written")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 4 {
		t.Errorf("files left in the directory: %v", ents)
	}
}

// TestReportSmallAtScale builds the page of k topics over 100,000 words
// (Zipf-like topics): the page embeds only the candidate words and stays
// small. k is 20 by default; STREAMFIT_REPORT_K=100 runs the k=100 case
// (about 8 CPU-seconds, most of it the k²·d logarithms of the distances).
func TestReportSmallAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("d=100,000 takes seconds")
	}
	k := 20
	if s := os.Getenv("STREAMFIT_REPORT_K"); s != "" {
		if _, err := fmt.Sscan(s, &k); err != nil {
			t.Fatalf("STREAMFIT_REPORT_K=%q: %v", s, err)
		}
	}
	const d = 100_000
	r := rand.New(rand.NewPCG(9, 10))
	m := &models.Model{Model: "lda", K: k, D: d, Alpha0: 1, Alpha: make([]float64, k), Topics: make([][]float64, k),
		Fit: &models.FitRecord{Docs: 1e6, Tokens: 2e8, Passes: 2}}
	m.Vocab = make([]string, d)
	for w := range d {
		m.Vocab[w] = fmt.Sprintf("word%06d", w)
	}
	for t := range k {
		m.Alpha[t] = 1 / float64(k)
		row := make([]float64, d)
		perm := r.Perm(d)
		var s float64
		for rank, w := range perm {
			row[w] = 1 / math.Pow(float64(rank+1), 1.1)
			s += row[w]
		}
		for w := range row {
			row[w] /= s
		}
		m.Topics[t] = row
	}
	start := time.Now()
	var b bytes.Buffer
	v := topicView(m, m.Vocab)
	if err := Render(&b, &Data{Title: "scale", Kind: "lda", Topics: v}); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	words := 0
	for _, c := range v.Cand {
		words += len(c)
	}
	t.Logf("k=%d d=%d: page %d KB, %d embedded words (%d topic entries), built in %v", k, d, b.Len()/1024, len(v.Words), words, el)
	// About 1.6 KB per topic: 40 candidate words with their probabilities.
	if limit := 50<<10 + k*4<<10; b.Len() > limit {
		t.Errorf("page is %d bytes, want under %d", b.Len(), limit)
	}
	var back Data
	page := b.String()
	i := strings.Index(page, `<script type="application/json" id="data">`)
	j := strings.Index(page[i:], "</script>")
	if err := json.Unmarshal([]byte(page[i+len(`<script type="application/json" id="data">`):i+j]), &back); err != nil {
		t.Fatalf("embedded data: %v", err)
	}
	if len(back.Topics.Cand) != k || len(back.Topics.X) != k {
		t.Errorf("embedded %d topics and %d positions", len(back.Topics.Cand), len(back.Topics.X))
	}
}

// TestFitProvenance checks that the fit record reaches the page: its
// input, warnings, and fields the page does not know by name.
func TestFitProvenance(t *testing.T) {
	m := &models.Model{Model: "lda", K: 2, D: 3, Alpha0: 1, Alpha: []float64{0.5, 0.5},
		Topics: [][]float64{{0.5, 0.5, 0}, {0, 0.5, 0.5}},
		Fit: &models.FitRecord{Docs: 120, Tokens: 3400, Passes: 3, SketchTail: 0.5,
			Warnings: []string{"the data depart from the model"}}}
	path := filepath.Join(t.TempDir(), "m.json")
	if err := m.Write(path); err != nil {
		t.Fatal(err)
	}
	d, err := Build(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	prov := map[string]string{}
	for _, p := range d.Provenance {
		prov[p[0]] = p[1]
	}
	if prov["input"] != "120 documents, 3400 tokens, 3-word vocabulary" || prov["passes"] != "3" || prov["sketch tail (its last singular value over the k-th)"] != "0.5" {
		t.Errorf("provenance %v", d.Provenance)
	}
	if len(d.Warnings) != 1 || d.Warnings[0].Detail != "the data depart from the model" || len(d.Warnings[0].Try) == 0 {
		t.Errorf("warnings %+v", d.Warnings)
	}
	if d.Topics.Unit != "expected tokens" || d.Topics.Scale != 3400 {
		t.Errorf("bars in %s × %g, want expected tokens × 3400", d.Topics.Unit, d.Topics.Scale)
	}
}

// TestScoresOrder checks that the scores of several evaluation files come
// in the page's order (perplexity, NPMI, UMass, diversity), each saying
// where it comes from.
func TestScoresOrder(t *testing.T) {
	dir := t.TempDir()
	coh := filepath.Join(dir, "coherence.json")
	os.WriteFile(coh, []byte(`{"k": 2, "top": 10, "docs": 374, "umass": -0.95, "npmi": 0.33, "diversity": 0.76}`), 0o644)
	held := filepath.Join(dir, "heldout.json")
	os.WriteFile(held, []byte(`{"docs": 41, "perplexity": 305.4, "log_likelihood": -63875.5}`), 0o644)
	d := &Data{Topics: &TopicView{}}
	for _, p := range []string{coh, held} {
		if err := evalFigures(d, p, "", 2, true); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, s := range d.Scores {
		got = append(got, fmt.Sprintf("%s %v (%s)", s.Name, s.Value, s.Source))
	}
	want := []string{
		"held-out perplexity 305.4 (heldout.json: 41 held-out documents)",
		"coherence (NPMI) 0.33 (coherence.json: top 10 words of each topic, 374 documents)",
		"coherence (UMass) -0.95 (coherence.json: top 10 words of each topic, 374 documents)",
		"topic diversity 0.76 (coherence.json: top 10 words of each topic, 374 documents)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("scores\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestExplain checks that each warning a fit writes is explained in plain
// words, with something to try, its own words kept as the detail.
func TestExplain(t *testing.T) {
	for _, c := range []struct{ warning, title string }{
		{"the data depart from the model: the raw topics lie 1.93 (ℓ1, mean; max 4.22) from distributions and were projected onto the simplex, and Σα̂ is 1.39 against 1; the topics are a start for likelihood refinement (if k=16 exceeds what the data support, lower k)", "The first estimate of the topics needed large corrections"},
		{"the data support 40 spectral topics, not k=50 (the second moment's small directions hold negative ones, as real text's do): the spectral fit has 40, and 10 more were split from the heaviest for the EM passes to separate", "The data hold fewer clear topics than you asked for"},
		{"the sketch of the second moment barely decays past the k-th direction (last singular value 0.50 of the k-th): the topics may be poorly spanned, and the checks below may blame k; one power pass (PowerIters = 1, one more pass over the data) usually fixes it", "The data's summary may not separate the topics well"},
		{"Σα̂ is 1.4, expected 1: some topics may be spurious (k=20 may exceed what the data support; try a lower k)", "Some topics may be spurious"},
		{"topics 3 (0.41), 7 (0.52) had more than 0.30 of ℓ1 mass moved by the projection onto the simplex: poorly estimated or spurious (try a lower k)", "Some topics were estimated poorly"},
		{"3 of the k=20 eigenvalues of the second moment are below 0.01 of the largest (the smallest is 0.004 of it): the data seem to support about 17 topics; try a lower k", "Some topics are weakly supported by the data"},
		{"the decomposition of the set tensor: did not settle within 100 iterations (its answer is used; more Iters, another Solver or a lower k may help)", "The solver stopped before it settled"},
	} {
		w := explain(c.warning)
		if w.Title != c.title || w.Detail != c.warning || w.Meaning == "" || len(w.Try) == 0 {
			t.Errorf("%.40s…: explained as %+v, want the title %q", c.warning, w, c.title)
		}
	}
	if w := explain("something new"); w.Meaning != "something new" || w.Detail != "something new" {
		t.Errorf("an unknown warning: %+v", w)
	}
}
