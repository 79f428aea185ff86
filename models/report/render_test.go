package report

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
	_ "github.com/streamfit/streamfit/models/all"
	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/models/ica"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/models/markov"
	"github.com/streamfit/streamfit/models/multiview"
	"github.com/streamfit/streamfit/stream/synth"
)

// fitLDA fits a small generated corpus and writes its model (with a made-up
// vocabulary) to dir.
func fitLDA(t *testing.T, dir string, k int) (*models.Model, string) {
	t.Helper()
	src, err := synth.NewLDA(synth.LDAConfig{Docs: 6000, Vocab: 400, K: k, Alpha0: 1, DocLen: 120, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	m, err := lda.Fit(context.Background(), src, lda.Config{K: k, Alpha0: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m.Vocab = make([]string, m.D)
	for i := range m.Vocab {
		m.Vocab[i] = fmt.Sprintf("w%03d", i)
	}
	path := filepath.Join(dir, "lda.json")
	if err := m.Write(path); err != nil {
		t.Fatal(err)
	}
	return m, path
}

// writeReport builds and writes the report of the model at path.
func writeReport(t *testing.T, path string, o Options) string {
	t.Helper()
	d, err := Build(context.Background(), path, o)
	if err != nil {
		t.Fatal(err)
	}
	out := strings.TrimSuffix(path, ".json") + ".html"
	if err := Write(out, d); err != nil {
		t.Fatal(err)
	}
	return out
}

// saveShot decodes a screenshot, checks its size and keeps it in
// $STREAMFIT_REPORT_SHOTS when set; it returns the number of pixels of the
// page's selection red (#d9534f).
func saveShot(t *testing.T, b []byte, name string, width int) int {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	// The page's scroll bar may take a few pixels of the width.
	if w := img.Bounds().Dx(); w > width || w < width-20 {
		t.Errorf("screenshot is %d pixels wide, want %d", w, width)
	}
	if dir := os.Getenv("STREAMFIT_REPORT_SHOTS"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	red := 0
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if near(cr>>8, 0xd9) && near(cg>>8, 0x53) && near(cb>>8, 0x4f) {
				red++
			}
		}
	}
	return red
}

func near(a uint32, b int) bool { return math.Abs(float64(int(a)-b)) <= 12 }

// rect is an element's box in the viewport.
type rect struct{ X, Y, W, H float64 }

func (b *browser) box(selector string) rect {
	b.t.Helper()
	var r rect
	b.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) throw new Error("no element"); e.scrollIntoView({block: "center"}); const r = e.getBoundingClientRect(); return {X: r.x, Y: r.y, W: r.width, H: r.height}; })()`, selector), &r)
	return r
}

func (b *browser) barWords() []string {
	var w []string
	b.eval(`Array.from(document.querySelectorAll("#bars text.word")).map(e => e.textContent)`, &w)
	return w
}

// checkRanking checks that the page's words are the n highest scores of
// the whole vocabulary, in order. The page holds φ and p to 6 significant
// digits, so two words whose scores differ by less than 1e-5 (relative) may
// come in either order.
func checkRanking(t *testing.T, what string, got []string, score []float64, vocab []string, n int) {
	t.Helper()
	idx := make([]int, len(score))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return score[idx[a]] > score[idx[b]] })
	id := map[string]int{}
	for i, w := range vocab {
		id[w] = i
	}
	if len(got) != n {
		t.Errorf("%s: %d words shown, want %d", what, len(got), n)
		return
	}
	for i, w := range got {
		want := score[idx[i]]
		if g := score[id[w]]; math.Abs(g-want) > 1e-5*math.Abs(want) {
			t.Errorf("%s: word %d is %s (score %g), want %s (score %g)", what, i, w, g, vocab[idx[i]], want)
			return
		}
	}
}

// TestReportLDAInChromium renders a fitted LDA model's report in headless
// Chromium and checks what a person sees: k circles on the map, a click on
// a topic turns the bar chart into that topic's words (at λ = 1 its most
// probable words, at λ = 0 its words of highest lift, both against a
// brute-force ranking of the whole vocabulary), no console error, no
// network request.
func TestReportLDAInChromium(t *testing.T) {
	findChromium(t)
	const k = 8
	dir := t.TempDir()
	m, path := fitLDA(t, dir, k)
	// Document topics (document i dominated by topic i mod k) and an
	// evaluation file with an unknown value.
	theta := make([][]float64, 50)
	for i := range theta {
		theta[i] = make([]float64, k)
		for j := range theta[i] {
			theta[i][j] = 0.5 / k
		}
		theta[i][i%k] += 0.5
	}
	thetaPath := filepath.Join(dir, "theta.parquet")
	writeThetaParquet(t, thetaPath, theta, true)
	evalPath := filepath.Join(dir, "eval.json")
	os.WriteFile(evalPath, []byte(`{"perplexity": 900, "topic_umass": [-1, -2, -3, null, -5, -6, -7, -8]}`), 0o644)
	html := writeReport(t, path, Options{ThetaPath: thetaPath, EvalPaths: []string{evalPath}})
	url := "file://" + html

	b := startBrowser(t, 1280, 1500)
	b.navigate(url)
	var ready string
	b.eval(`document.body.getAttribute("data-ready")`, &ready)
	if ready != "1" {
		t.Fatalf("the page's script did not finish (data-ready=%q)", ready)
	}
	var circles int
	b.eval(`document.querySelectorAll("#map circle.topic").length`, &circles)
	if circles != k {
		t.Errorf("map has %d circles, want k=%d", circles, k)
	}
	var heads []string
	b.eval(`Array.from(document.querySelectorAll(".topictable th")).map(e => e.textContent)`, &heads)
	if !slices.Contains(heads, "documents") || !slices.Contains(heads, "UMass") {
		t.Errorf("topic table columns %q lack documents and UMass", heads)
	}
	var docBars int
	b.eval(`Array.from(document.querySelectorAll(".panel")).filter(p => p.querySelector("h2").textContent === "Documents by dominant topic")[0].querySelectorAll("rect.bar").length`, &docBars)
	if docBars != k {
		t.Errorf("documents by dominant topic: %d bars, want %d", docBars, k)
	}
	before := b.barWords()
	if len(before) != TopWords {
		t.Errorf("before any click the bar chart has %d words, want %d", len(before), TopWords)
	}

	// Click the topic of smallest weight: its circle is drawn last, on top.
	pi := models.TopicWeights(m.K, m.Alpha)
	t0 := 0
	for i := range pi {
		if pi[i] < pi[t0] {
			t0 = i
		}
	}
	c := b.box(fmt.Sprintf(`#map circle[data-topic="%d"]`, t0))
	b.click(c.X+c.W/2, c.Y+c.H/2)
	var title string
	b.eval(`document.getElementById("bars-title").textContent`, &title)
	if !strings.Contains(title, fmt.Sprintf("topic %d ", t0)) {
		t.Errorf("after clicking topic %d the bar chart is titled %q", t0, title)
	}
	after := b.barWords()
	if slices.Equal(before, after) || len(after) != TopWords {
		t.Errorf("clicking topic %d did not change the bar chart: %v", t0, after)
	}
	var sel []int
	b.eval(`Array.from(document.querySelectorAll("#map circle.selected")).map(e => +e.getAttribute("data-topic"))`, &sel)
	if !slices.Equal(sel, []int{t0}) {
		t.Errorf("selected circles %v, want [%d]", sel, t0)
	}

	// The slider's ends: λ = 1 ranks by φ, λ = 0 by lift φ/p.
	p := make([]float64, m.D)
	for s, row := range m.Topics {
		for w, x := range row {
			p[w] += pi[s] * x
		}
	}
	lift := make([]float64, m.D)
	for w, x := range m.Topics[t0] {
		if x > 0 {
			lift[w] = x / p[w]
		}
	}
	s := b.box("#lambda")
	b.click(s.X+s.W-1, s.Y+s.H/2)
	checkRanking(t, "λ = 1 (most probable words)", b.barWords(), m.Topics[t0], m.Vocab, TopWords)
	shot := b.screenshot()
	if red := saveShot(t, shot, "report-lda.png", 1280); red < 500 {
		t.Errorf("only %d pixels of the selection red in the screenshot", red)
	}
	b.click(s.X+1, s.Y+s.H/2)
	checkRanking(t, "λ = 0 (words of highest lift)", b.barWords(), lift, m.Vocab, TopWords)

	// A second click on the topic returns to the corpus view.
	c = b.box(fmt.Sprintf(`#map circle[data-topic="%d"]`, t0))
	b.click(c.X+c.W/2, c.Y+c.H/2)
	if got := b.barWords(); !slices.Equal(got, before) {
		t.Errorf("clicking the selected topic again shows %v, want the corpus view %v", got, before)
	}
	if pr := b.problems(url); len(pr) > 0 {
		t.Errorf("the page reported problems:\n%s", strings.Join(pr, "\n"))
	}

	// A link to a topic and λ opens there (from another page: a change of
	// fragment alone does not load the page again).
	b.navigate("about:blank")
	b.navigate(url + fmt.Sprintf("#topic=%d&lambda=1", t0))
	checkRanking(t, "#topic&lambda=1", b.barWords(), m.Topics[t0], m.Vocab, TopWords)
}

// TestReportGMMInChromium renders a fitted GMM's report: a heat map of the
// k×d means, bars of the weights and variances, no console error, no
// network request.
func TestReportGMMInChromium(t *testing.T) {
	findChromium(t)
	const k, d = 4, 12
	src, err := synth.NewGMM(synth.GMMConfig{Rows: 20000, D: d, K: k, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m, err := gmm.Fit(context.Background(), src, gmm.Config{K: k, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "gmm.json")
	if err := m.Write(path); err != nil {
		t.Fatal(err)
	}
	html := writeReport(t, path, Options{})
	url := "file://" + html
	b := startBrowser(t, 1280, 1200)
	b.navigate(url)
	var cells, barsN int
	b.eval(`document.querySelectorAll(".panel.heatmap rect.cell").length`, &cells)
	b.eval(`document.querySelectorAll(".panel.bars rect.bar").length`, &barsN)
	if cells != k*d {
		t.Errorf("means heat map has %d cells, want k·d = %d", cells, k*d)
	}
	if barsN != 2*k {
		t.Errorf("%d bars, want k weights and k variances = %d", barsN, 2*k)
	}
	// The heat map's colours follow the means: the cell of the largest
	// |mean| is fully red (positive) or fully blue (negative).
	var fills []string
	b.eval(`Array.from(document.querySelectorAll(".panel.heatmap rect.cell")).map(e => e.getAttribute("fill"))`, &fills)
	bi, bj := 0, 0
	for i, row := range m.Means {
		for j, x := range row {
			if math.Abs(x) > math.Abs(m.Means[bi][bj]) {
				bi, bj = i, j
			}
		}
	}
	want := "rgb(255,0,0)"
	if m.Means[bi][bj] < 0 {
		want = "rgb(0,0,255)"
	}
	if len(fills) == k*d && fills[bi*d+bj] != want {
		t.Errorf("the largest |mean| (%d, %d) = %g is coloured %s, want %s", bi, bj, m.Means[bi][bj], fills[bi*d+bj], want)
	}
	saveShot(t, b.screenshot(), "report-gmm.png", 1280)
	if pr := b.problems(url); len(pr) > 0 {
		t.Errorf("the page reported problems:\n%s", strings.Join(pr, "\n"))
	}
}

// TestBrowserSeesProblems checks that the checks above can fail: a page that
// logs an error and requests a URL is reported, and a script added to a
// report is refused by its Content-Security-Policy and reported.
func TestBrowserSeesProblems(t *testing.T) {
	findChromium(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.html")
	os.WriteFile(bad, []byte(`<!DOCTYPE html><html><body><script>console.error("boom"); fetch("http://192.0.2.1/x").catch(() => {});</script></body></html>`), 0o644)
	_, path := fitLDA(t, dir, 3)
	html := writeReport(t, path, Options{})
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	injected := filepath.Join(dir, "injected.html")
	os.WriteFile(injected, bytes.Replace(page, []byte(`<div id="main"></div>`), []byte(`<div id="main"></div><script>fetch("http://192.0.2.1/y")</script>`), 1), 0o644)

	b := startBrowser(t, 800, 600)
	b.navigate("file://" + bad)
	pr := strings.Join(b.problems("file://"+bad), "\n")
	if !strings.Contains(pr, "console.error") || !strings.Contains(pr, "network request: http://192.0.2.1/x") {
		t.Errorf("a page logging an error and fetching a URL was reported as:\n%s", pr)
	}
	b2 := startBrowser(t, 800, 600)
	b2.navigate("file://" + injected)
	pr = strings.Join(b2.problems("file://"+injected), "\n")
	if !strings.Contains(pr, "Content Security Policy") || strings.Contains(pr, "network request") {
		t.Errorf("a script injected into a report was reported as:\n%s", pr)
	}
}

// TestReportDenseKindsInChromium renders the truth of an ICA, an HMM, a
// snapshot HMM and a multi-view model (truth files read as models): every
// panel is drawn, with no console error and no network request.
func TestReportDenseKindsInChromium(t *testing.T) {
	findChromium(t)
	dir := t.TempDir()
	type truth interface{ Write(string) error }
	icaSrc, err := synth.NewICA(synth.ICAConfig{Rows: 10, D: 5, K: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	hmmSrc, err := synth.NewHMMSeq(synth.HMMSeqConfig{Seqs: 10, Len: 5, K: 3, D: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := synth.NewSnapshots(synth.SnapshotConfig{Sets: 10, PerSet: 5, K: 3, M: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	mv, err := synth.NewMultiView(synth.MultiViewConfig{Rows: 10, Dims: [3]int{3, 4, 5}, K: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t, 1280, 1200)
	for _, c := range []struct {
		name   string
		truth  truth
		panels int
	}{
		{"ica", ica.TruthOf(icaSrc), 3},         // kurtosis, mixing, unmixing
		{"hmm", hmm.TruthOf(hmmSrc), 4},         // T, its stationary distribution, π, O
		{"snapshots", markov.TruthOf(snap), 5},  // P, stationary, π, T, U
		{"multiview", multiview.TruthOf(mv), 4}, // weights, three views
	} {
		path := filepath.Join(dir, c.name+".json")
		if err := c.truth.Write(path); err != nil {
			t.Fatal(err)
		}
		url := "file://" + writeReport(t, path, Options{})
		from := b.eventCount()
		b.navigate(url)
		var panels, drawn int
		b.eval(`document.querySelectorAll(".panel").length`, &panels)
		b.eval(`Array.from(document.querySelectorAll(".panel")).filter(p => p.querySelectorAll("rect.cell, rect.bar").length > 0).length`, &drawn)
		if panels != c.panels || drawn != panels {
			t.Errorf("%s: %d panels, %d drawn; want %d", c.name, panels, drawn, c.panels)
		}
		if pr := b.problemsSince(from, url); len(pr) > 0 {
			t.Errorf("%s: the page reported problems:\n%s", c.name, strings.Join(pr, "\n"))
		}
		saveShot(t, b.screenshot(), "report-"+c.name+".png", 1280)
	}
}

// clusteredModel writes an LDA model whose k topics fall in a few tight
// clusters of near-copies (as a real-text fit's split topics do), so that
// on the map many circles lie on top of each other; its fit record carries
// the warnings, plan and EM record of a real-text fit.
func clusteredModel(t *testing.T, dir string, k int) string {
	t.Helper()
	const d, clusters = 240, 4
	rng := rand.New(rand.NewPCG(1, 2))
	m := &models.Model{Model: "lda", K: k, D: d, Alpha0: 1, Alpha: make([]float64, k), Topics: make([][]float64, k), Vocab: make([]string, d)}
	for w := range m.Vocab {
		m.Vocab[w] = fmt.Sprintf("word%03d", w)
	}
	for i := range k {
		c := i % clusters
		row := make([]float64, d)
		var sum float64
		for w := range row {
			row[w] = 0.01
			if w%clusters == c {
				row[w] = 1 + 0.02*rng.Float64()
			}
			sum += row[w]
		}
		for w := range row {
			row[w] /= sum
		}
		m.Topics[i] = row
		m.Alpha[i] = 1 / float64(i+2)
	}
	var s float64
	for _, a := range m.Alpha {
		s += a
	}
	for i := range m.Alpha {
		m.Alpha[i] /= s
	}
	whitened := make([]float64, k)
	for i := range whitened {
		whitened[i] = 1 + 1e-7*float64(i)
	}
	m.Fit = &models.FitRecord{Docs: 366, Tokens: 224577, Passes: 10, Seed: 1, Whitening: "randomized",
		M2Eigenvalues: []float64{0.004, 0.002, 0.0005}, WhitenedM2Eigenvalues: whitened, SketchTail: 0.5,
		Plan:   map[string]any{"third": "explicit", "auto": false, "solver": "simultaneous"},
		Solver: models.SolverRecord{Name: "simultaneous", Restarts: 2, Iters: 41},
		EM:     &models.EMRecord{Passes: 7, Bounds: []float64{-6.81, -6.33, -6.23, -6.13, -6.05, -5.99, -5.94}, Converged: true, Tol: 0.01, FitAlpha: true, Eta: 0.01},
		Warnings: []string{
			"the data depart from the model: the raw topics lie 1.93 (ℓ1, mean; max 4.22) from distributions and were projected onto the simplex, and Σα̂ is 1.39 against 1; the second moment has 4 negative directions at least 0.5 of its k-th positive one, passed over by the whitening; the topics are a start for likelihood refinement (if k=24 exceeds what the data support, lower k)",
			"the data support 20 spectral topics, not k=24 (the second moment's small directions hold negative ones, as real text's do): the spectral fit has 20, and 4 more were split from the heaviest for the EM passes to separate",
			"the sketch of the second moment barely decays past the k-th direction (last singular value 0.50 of the k-th): the topics may be poorly spanned, and the checks below may blame k; one power pass (PowerIters = 1, one more pass over the data) usually fixes it",
		}}
	path := filepath.Join(dir, "clustered.json")
	if err := m.Write(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// overlaps lists the pairs of boxes (named by their labels) that overlap
// by more than half a pixel both ways.
func overlaps(labels []string, boxes []rect) []string {
	var out []string
	for i, a := range boxes {
		for j := i + 1; j < len(boxes); j++ {
			b := boxes[j]
			if min(a.X+a.W, b.X+b.W)-max(a.X, b.X) > 0.5 && min(a.Y+a.H, b.Y+b.H)-max(a.Y, b.Y) > 0.5 {
				out = append(out, labels[i]+" and "+labels[j])
			}
		}
	}
	return out
}

// TestReportReadsInChromium renders the report of a model whose topics lie
// in tight clusters, as on real text, with an evaluation and the fit's
// warnings, at a laptop's 1280×900, and checks what a person reads: every
// topic's label on the map apart from every other (their boxes do not
// overlap, also after a topic is selected) and above every circle; the
// held-out perplexity, coherence and diversity within the first screen;
// each warning in plain words with the fit's own words folded away; and
// "How this model was made" and the topic table in words, not JSON.
func TestReportReadsInChromium(t *testing.T) {
	findChromium(t)
	const k = 24
	dir := t.TempDir()
	path := clusteredModel(t, dir, k)
	umass := make([]string, k)
	for i := range umass {
		umass[i] = fmt.Sprint(-1 - float64(i)/10)
	}
	evalPath := filepath.Join(dir, "eval.json")
	os.WriteFile(evalPath, []byte(`{"docs": 41, "perplexity": 305.4, "umass": -0.949, "npmi": 0.33, "diversity": 0.756,
		"topic_umass": [`+strings.Join(umass, ", ")+`], "topic_npmi": [`+strings.Repeat("0.3, ", k-1)+`0.3]}`), 0o644)
	url := "file://" + writeReport(t, path, Options{EvalPaths: []string{evalPath}})
	const viewport = 900
	b := startBrowser(t, 1280, viewport)
	b.navigate(url)

	labelBoxes := func(when string) {
		t.Helper()
		var got []struct {
			Label string
			Box   rect
		}
		b.eval(`Array.from(document.querySelectorAll("#map text.tlabel")).map(e => { const r = e.getBoundingClientRect(); return {Label: e.textContent, Box: {X: r.x, Y: r.y, W: r.width, H: r.height}}; })`, &got)
		if len(got) != k {
			t.Fatalf("%s: %d labels on the map, want k=%d", when, len(got), k)
		}
		var svg rect
		b.eval(`(() => { const r = document.getElementById("map").getBoundingClientRect(); return {X: r.x, Y: r.y, W: r.width, H: r.height}; })()`, &svg)
		names := make([]string, k)
		boxes := make([]rect, k)
		seen := map[string]bool{}
		for i, g := range got {
			names[i], boxes[i] = g.Label, g.Box
			seen[g.Label] = true
			if g.Box.W <= 0 || g.Box.X < svg.X || g.Box.Y < svg.Y || g.Box.X+g.Box.W > svg.X+svg.W || g.Box.Y+g.Box.H > svg.Y+svg.H {
				t.Errorf("%s: label %s at %+v is not inside the map %+v", when, g.Label, g.Box, svg)
			}
		}
		for i := range k {
			if !seen[fmt.Sprint(i)] {
				t.Errorf("%s: no label %d on the map", when, i)
			}
		}
		if o := overlaps(names, boxes); len(o) > 0 {
			t.Errorf("%s: labels overlap: %s", when, strings.Join(o, ", "))
		}
		var above bool
		b.eval(`(() => { const l = document.querySelector("#map g.labels"); return Array.from(document.querySelectorAll("#map circle.topic")).every(c => c.compareDocumentPosition(l) & Node.DOCUMENT_POSITION_FOLLOWING); })()`, &above)
		if !above {
			t.Errorf("%s: a circle is drawn over the labels", when)
		}
	}
	labelBoxes("on opening")
	// The centres of the map's circles are few: the clusters' topics
	// share them, and their labels must have moved apart.
	var centres int
	b.eval(`new Set(Array.from(document.querySelectorAll("#map circle.topic")).map(c => Math.round(+c.getAttribute("cx") / 8) + "," + Math.round(+c.getAttribute("cy") / 8))).size`, &centres)
	if centres > k/2 {
		t.Errorf("the clustered topics' circles have %d distinct centres, want at most %d: the test does not crowd the map", centres, k/2)
	}
	c := b.box(`#map circle[data-topic="0"]`)
	b.click(c.X+c.W/2, c.Y+c.H/2)
	labelBoxes("topic 0 selected")

	// The scores a person looks for, in the first screen.
	b.eval(`window.scrollTo(0, 0)`, nil)
	var scores []struct {
		Name   string
		Top    float64
		Bottom float64
	}
	b.eval(`Array.from(document.querySelectorAll(".scores .score")).map(e => { const r = e.getBoundingClientRect(); return {Name: e.querySelector(".score-name").textContent, Top: r.top, Bottom: r.bottom}; })`, &scores)
	var names []string
	for _, s := range scores {
		names = append(names, s.Name)
		if s.Top < 0 || s.Bottom > viewport {
			t.Errorf("score %q spans %g–%g px, not within the first %d px", s.Name, s.Top, s.Bottom, viewport)
		}
	}
	if want := []string{"held-out perplexity", "coherence (NPMI)", "coherence (UMass)", "topic diversity"}; !slices.Equal(names, want) {
		t.Errorf("scores %q, want %q", names, want)
	}
	var first string
	b.eval(`document.querySelector(".scores .score-value").textContent`, &first)
	if first != "305.4" {
		t.Errorf("held-out perplexity shown as %q, want 305.4", first)
	}

	// The warnings: a title, plain words and what to try in sight; the
	// fit's own words in a closed <details>.
	var warn struct {
		Items, Tries, Closed int
		Shown, Folded        string
	}
	b.eval(`(() => { const w = document.querySelector(".warnings"); const c = w.cloneNode(true); c.querySelectorAll("details").forEach(d => d.remove());
		return {Items: w.querySelectorAll(".warning").length, Tries: w.querySelectorAll(".warning li").length,
			Closed: Array.from(w.querySelectorAll("details")).filter(d => !d.open).length,
			Shown: c.textContent, Folded: Array.from(w.querySelectorAll("details")).map(d => d.textContent).join(" ")}; })()`, &warn)
	if warn.Items != 3 || warn.Closed != 3 || warn.Tries < 3 {
		t.Errorf("warnings: %d items, %d closed details, %d things to try; want 3, 3, at least 3", warn.Items, warn.Closed, warn.Tries)
	}
	for _, jargon := range []string{"ℓ1", "Σα̂", "simplex", "whitening", "singular value"} {
		if strings.Contains(warn.Shown, jargon) {
			t.Errorf("the warnings say %q outside their technical detail: %s", jargon, warn.Shown)
		}
		if !strings.Contains(warn.Folded, jargon) {
			t.Errorf("the warnings' technical detail lost %q", jargon)
		}
	}

	// "How this model was made" and the topic table speak words.
	var prov [][2]string
	b.eval(`Array.from(document.querySelectorAll(".prov tr")).map(r => [r.querySelector("th").textContent, r.querySelector("td") ? r.querySelector("td").textContent : ""])`, &prov)
	var rows []string
	for _, r := range prov[1:] { // the first row names the model file
		rows = append(rows, r[0]+" = "+r[1])
	}
	text := strings.Join(rows, "\n")
	for _, raw := range []string{"{", "[", "_", `"`, "1.0000001"} {
		if strings.Contains(text, raw) {
			t.Errorf("%q in how the model was made:\n%s", raw, text)
		}
	}
	for _, want := range []string{"EM refinement", "training bound per token, by pass", "7 values, first -6.81, last -5.94", "chosen automatically: no"} {
		if !strings.Contains(text, want) {
			t.Errorf("how the model was made lacks %q:\n%s", want, text)
		}
	}
	var heads []string
	b.eval(`Array.from(document.querySelectorAll(".topictable th")).map(e => e.textContent)`, &heads)
	if !slices.Contains(heads, "UMass") || !slices.Contains(heads, "NPMI") || slices.ContainsFunc(heads, func(h string) bool { return strings.Contains(h, "_") }) {
		t.Errorf("topic table columns %q, want UMass and NPMI and no JSON key", heads)
	}
	saveShot(t, b.screenshot(), "report-read.png", 1280)
	if pr := b.problems(url); len(pr) > 0 {
		t.Errorf("the page reported problems:\n%s", strings.Join(pr, "\n"))
	}
}
