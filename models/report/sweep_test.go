package report

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/gmm"
)

// sweepJSON is a sweep file of k = 4, 8, 12, 16 recommending 8, whose
// models are listed as m4.json … (m8.json the page's model).
const sweepJSON = `{"scores": [
 {"k": 4, "perplexity": 420.5, "umass": -1.9, "npmi": 0.05, "diversity": 0.95, "em_passes": 5},
 {"k": 8, "perplexity": 301.2, "umass": -1.5, "npmi": 0.11, "diversity": 0.9, "em_passes": 4},
 {"k": 12, "perplexity": 299.9, "umass": -1.6, "npmi": 0.09, "diversity": 0.8, "em_passes": 4},
 {"k": 16, "perplexity": 298.7, "umass": -1.8, "npmi": 0.07, "diversity": 0.7, "em_passes": 3}],
 "recommended": 8, "rule": "the smallest k whose held-out perplexity is within 1% of the lowest (298.7)",
 "held_out": "every 10th", "passes": 9, "seconds": 3.5,
 "files": ["m4.json", "m8.json", "m12.json", "m16.json"]}`

// TestSweepView: a sweep file gives the page one point per k with the
// scores of the file, the recommended k and the page's own k; the model
// file of a k is found beside the sweep file; a model whose k is not in
// the sweep gets a note; bad sweep files and a sweep for a dense model are
// refused.
func TestSweepView(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	sp := filepath.Join(dir, "sweep.json")
	os.WriteFile(sp, []byte(sweepJSON), 0o644)
	m := &models.Model{Model: "lda", K: 2, D: 3, Alpha0: 1, Alpha: []float64{0.5, 0.5}, Topics: [][]float64{{0.5, 0.5, 0}, {0, 0.5, 0.5}}}
	mp := filepath.Join(dir, "m8.json")
	if err := m.Write(mp); err != nil {
		t.Fatal(err)
	}
	d, err := Build(ctx, mp, Options{SweepPath: sp})
	if err != nil {
		t.Fatal(err)
	}
	v := d.Sweep
	if v == nil || !slices.Equal(v.K, []int{4, 8, 12, 16}) || v.Recommended != 8 || len(v.Perplexity) != 4 || v.Perplexity[1] != 301.2 || v.NPMI[3] != 0.07 || v.Shown != 0 {
		t.Fatalf("sweep view %+v", v)
	}
	if !strings.Contains(strings.Join(d.Notes, " "), "k=2, which is not one of the k") {
		t.Errorf("a model outside the sweep: notes %q", d.Notes)
	}
	sf, err := ReadSweep(sp)
	if err != nil {
		t.Fatal(err)
	}
	if got := sf.ModelFile(sp, 8); got != mp {
		t.Errorf("the model file of k=8 is %q, want %q (beside the sweep file)", got, mp)
	}
	if got := sf.ModelFile(sp, 5); got != "" {
		t.Errorf("the model file of k=5, not swept: %q", got)
	}
	for name, body := range map[string]string{
		"not JSON":        `{"scores": [`,
		"no scores":       `{"recommended": 0}`,
		"k not ascending": `{"scores": [{"k": 8}, {"k": 4}]}`,
		"k repeated":      `{"scores": [{"k": 4}, {"k": 4}]}`,
		"recommended":     `{"scores": [{"k": 4}, {"k": 8}], "recommended": 6}`,
		"files":           `{"scores": [{"k": 4}, {"k": 8}], "files": ["a.json"]}`,
	} {
		bad := filepath.Join(dir, "bad.json")
		os.WriteFile(bad, []byte(body), 0o644)
		if _, err := Build(ctx, mp, Options{SweepPath: bad}); err == nil || !strings.Contains(err.Error(), "bad.json") {
			t.Errorf("%s: %v", name, err)
		}
	}
	g := &gmm.Model{Model: "gmm", K: 1, D: 2, Weights: []float64{1}, Means: [][]float64{{0, 1}}, Variances: []float64{1}}
	gp := filepath.Join(dir, "g.json")
	if err := g.Write(gp); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(ctx, gp, Options{SweepPath: sp}); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("a sweep for a gmm: %v", err)
	}
}

// TestReportSweepInChromium renders the page of the model of k=8 with the
// sweep over k = 4, 8, 12, 16: three curves (held-out perplexity, NPMI,
// UMass), each with one point per k placed by its value, the recommended
// k=8 ringed on each with the dashed line through it, the table's row of
// k=8 marked, no console error, no network request.
func TestReportSweepInChromium(t *testing.T) {
	findChromium(t)
	dir := t.TempDir()
	_, path := fitLDA(t, dir, 8)
	sp := filepath.Join(dir, "sweep.json")
	os.WriteFile(sp, []byte(strings.ReplaceAll(sweepJSON, "m8.json", filepath.Base(path))), 0o644)
	html := writeReport(t, path, Options{SweepPath: sp})
	url := "file://" + html
	b := startBrowser(t, 1280, 1200)
	b.navigate(url)
	var ready string
	b.eval(`document.body.getAttribute("data-ready")`, &ready)
	if ready != "1" {
		t.Fatalf("the page's script did not finish (data-ready=%q)", ready)
	}
	type point struct {
		K      int
		CX, CY float64
		Rec    bool
	}
	var curves []struct {
		Title  string
		Points []point
		RecX   []float64
	}
	b.eval(`Array.from(document.querySelectorAll(".sweep .panel.curve")).map(p => ({
		Title: p.querySelector("h3").textContent,
		Points: Array.from(p.querySelectorAll("circle.pt")).map(c => ({K: +c.getAttribute("data-k"), CX: +c.getAttribute("cx"), CY: +c.getAttribute("cy"), Rec: c.classList.contains("rec")})),
		RecX: Array.from(p.querySelectorAll("line.recline")).map(l => +l.getAttribute("x1")),
	}))`, &curves)
	values := map[string][]float64{
		"perplexity": {420.5, 301.2, 299.9, 298.7},
		"NPMI":       {0.05, 0.11, 0.09, 0.07},
		"UMass":      {-1.9, -1.5, -1.6, -1.8},
	}
	if len(curves) != len(values) {
		t.Fatalf("%d curves, want %d: %+v", len(curves), len(values), curves)
	}
	for _, c := range curves {
		var want []float64
		for name, v := range values {
			if strings.Contains(c.Title, name) {
				want = v
			}
		}
		if len(c.Points) != 4 || want == nil {
			t.Errorf("%q: %d points, want one per k (4)", c.Title, len(c.Points))
			continue
		}
		// x grows with k, y falls linearly as the value grows (SVG's y runs
		// down): one scale for every point.
		scale := (c.Points[1].CY - c.Points[0].CY) / (want[1] - want[0])
		for i, p := range c.Points {
			if p.K != []int{4, 8, 12, 16}[i] || (i > 0 && p.CX <= c.Points[i-1].CX) {
				t.Errorf("%q: point %d is k=%d at x=%g", c.Title, i, p.K, p.CX)
			}
			if y := c.Points[0].CY + scale*(want[i]-want[0]); !(scale < 0) || math.Abs(y-p.CY) > 0.01 {
				t.Errorf("%q: k=%d at y=%g, want %g (scale %g)", c.Title, p.K, p.CY, y, scale)
			}
			if p.Rec != (p.K == 8) {
				t.Errorf("%q: k=%d marked recommended %t", c.Title, p.K, p.Rec)
			}
		}
		if len(c.RecX) != 1 || c.RecX[0] != c.Points[1].CX {
			t.Errorf("%q: the recommended k's line at %v, its point at x=%g", c.Title, c.RecX, c.Points[1].CX)
		}
	}
	var rows []string
	b.eval(`Array.from(document.querySelectorAll(".sweeptable tr[data-k]")).map(r => r.getAttribute("data-k") + ":" + r.className)`, &rows)
	if !slices.Equal(rows, []string{"4:", "8:rec shown", "12:", "16:"}) {
		t.Errorf("table rows %q", rows)
	}
	var scores []string
	b.eval(`Array.from(document.querySelectorAll(".score .score-value")).map(e => e.textContent)`, &scores)
	if !slices.Equal(scores, []string{"301.2", "0.11", "-1.5", "0.9"}) {
		t.Errorf("the scores the page opens with: %q, want k=8's of the sweep", scores)
	}
	saveShot(t, b.screenshot(), "report-sweep.png", 1280)
	if pr := b.problems(url); len(pr) > 0 {
		t.Errorf("the page reported problems:\n%s", strings.Join(pr, "\n"))
	}
}
