package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
)

// writeNPY stores rows as a little-endian float64 .npy file (format 1.0).
func writeNPY(t *testing.T, path string, rows [][]float64) {
	t.Helper()
	var buf bytes.Buffer
	h := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", len(rows), len(rows[0]))
	buf.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&buf, binary.LittleEndian, uint16(len(h)))
	buf.WriteString(h)
	for _, r := range rows {
		binary.Write(&buf, binary.LittleEndian, r)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEvalCoherence: the true topics of a generated corpus score the same
// from model.json, .npy and Parquet, and better than random topics, by
// coherence and by held-out perplexity; bad arguments fail with the right
// status.
func TestEvalCoherence(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "lda", "--docs", "2000", "--vocab", "300", "--k", "4", "--doc-len", "50", "--alpha0", "0.4", "--seed", "3",
		"--out", p("c.parquet"), "--truth", p("truth.json"), "--progress", "off")
	truth, err := models.Read(p("truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeNPY(t, p("truth.npy"), truth.Topics)
	if err := models.WriteTopicsParquet(truth, p("truth.parquet")); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	random := make([][]float64, truth.K)
	for i := range random {
		random[i] = make([]float64, truth.D)
		for j := range random[i] {
			random[i][j] = r.Float64()
		}
	}
	writeNPY(t, p("random.npy"), random)

	score := func(model string) coherenceReport {
		var rep coherenceReport
		out := mustRun(t, "eval", "--model", model, "--coherence", p("c.parquet"), "--json")
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: %v\n%s", model, err, out)
		}
		return rep
	}
	ref := score(p("truth.json"))
	if ref.K != 4 || ref.Docs != 2000 || len(ref.TopicUMass) != 4 || ref.Top != 10 {
		t.Fatalf("report k=%d docs=%d topics=%d top=%d", ref.K, ref.Docs, len(ref.TopicUMass), ref.Top)
	}
	for _, m := range []string{"truth.npy", "truth.parquet"} {
		got := score(p(m))
		if got.UMass != ref.UMass || got.NPMI != ref.NPMI || got.Diversity != ref.Diversity {
			t.Errorf("%s: UMass %g NPMI %g diversity %g; model.json gives %g %g %g", m, got.UMass, got.NPMI, got.Diversity, ref.UMass, ref.NPMI, ref.Diversity)
		}
	}
	rnd := score(p("random.npy"))
	if rnd.UMass >= ref.UMass || rnd.NPMI >= ref.NPMI {
		t.Errorf("random topics: UMass %g NPMI %g, true topics %g %g", rnd.UMass, rnd.NPMI, ref.UMass, ref.NPMI)
	}
	if out := mustRun(t, "eval", "--model", p("truth.npy"), "--coherence", p("c.parquet")); !strings.Contains(out, "diversity:") || strings.Count(out, "\ntopic ") != 4 {
		t.Errorf("text report:\n%s", out)
	}

	// --heldout reads the same matrices: Parquet carries α, a .npy takes --alpha.
	perplexity := func(args ...string) float64 {
		var h struct {
			Perplexity float64 `json:"perplexity"`
		}
		out := mustRun(t, append([]string{"eval", "--heldout", p("c.parquet"), "--json"}, args...)...)
		if err := json.Unmarshal([]byte(out), &h); err != nil || h.Perplexity <= 0 {
			t.Fatalf("eval --heldout %v: %v\n%s", args, err, out)
		}
		return h.Perplexity
	}
	// A Parquet matrix's rows are renormalized when read (models.FromMatrix),
	// which moves some entries by an ulp: the same to rounding.
	if a, b := perplexity("--model", p("truth.json")), perplexity("--model", p("truth.parquet")); math.Abs(a-b) > 1e-12*a {
		t.Errorf("held-out perplexity from model.json %g, from Parquet %g", a, b)
	}
	if a, b := perplexity("--model", p("truth.npy"), "--alpha", "0.1"), perplexity("--model", p("truth.npy")); a == b {
		t.Errorf("--alpha 0.1 left the held-out perplexity of the .npy topics at %g", a)
	}
	if a, b := perplexity("--model", p("truth.npy")), perplexity("--model", p("random.npy")); a >= b {
		t.Errorf("held-out perplexity: true topics %g, random topics %g", a, b)
	}

	writeNPY(t, p("narrow.npy"), [][]float64{{0.5, 0.5}})
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--model", p("truth.json"), "--coherence", p("c.parquet"), "--top", "1"}, 2, "--top"},
		{[]string{"--model", p("truth.json"), "--coherence", p("missing.parquet")}, 1, "missing.parquet"},
		{[]string{"--model", p("narrow.npy"), "--coherence", p("c.parquet")}, 1, "300 words"},
		{[]string{"--model", p("truth.npy"), "--alpha", "-1", "--coherence", p("c.parquet")}, 2, "--alpha=-1"},
		{[]string{"--model", p("truth.npy"), "--alpha", "0", "--coherence", p("c.parquet")}, 2, "--alpha=0"},
		{[]string{"--model", p("truth.npy"), "--heldout", p("c.parquet"), "--coherence", p("c.parquet")}, 2, "separate runs"},
	} {
		code, _, errs := streamfit(t, append([]string{"eval"}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("eval %v: exit %d, stderr %q; want %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}
