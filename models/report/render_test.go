package report

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"math"
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
	if !slices.Contains(heads, "documents") || !slices.Contains(heads, "topic_umass") {
		t.Errorf("topic table columns %q lack documents and topic_umass", heads)
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
