package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestFitSweep: fit lda with a list of k writes a model per k, prints a
// row of scores per k and recommends the k of the generated truth; --json
// gives the same table, which report --sweep draws beside the recommended
// k's model; a list for a dense model or a bad list is a usage error.
func TestFitSweep(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "c.parquet")
	mustRun(t, "gen", "lda", "--docs", "20000", "--vocab", "1000", "--k", "5", "--out", in)
	out := mustRun(t, "fit", "lda", "--input", in, "--k", "3,5,8", "--out", filepath.Join(dir, "m-k{k}.json"))
	for _, k := range []int{3, 5, 8} {
		m, err := models.Read(filepath.Join(dir, "m-k"+strconv.Itoa(k)+".json"))
		if err != nil || m.K != k {
			t.Fatalf("k=%d: %v", k, err)
		}
	}
	if rows := strings.Count(out, "\n"); rows != 5 || !strings.Contains(out, "recommended k=5") {
		t.Errorf("table:\n%s", out)
	}
	// The plan before the passes, its forecast beside the CPU after them.
	if code, _, msg := streamfit(t, "fit", "lda", "--input", in, "--k", "3,5", "--progress", "off", "--out", filepath.Join(dir, "p-k{k}.json")); code != 0 ||
		!strings.Contains(msg, "plan: sweep k=3,5 (each k's spectral passes its own)") || !strings.Contains(msg, "the plan forecast") {
		t.Errorf("exit %d, no plan or forecast:\n%s", code, msg)
	}
	// The vocabulary is whitened by a sketch: each smaller k took the
	// passes of its own fit, so its model is `fit --k 3`'s (fitted on the
	// nine tenths the sweep trains on, as a held-out file of the tenth
	// makes them). With --sweep-start shared it starts elsewhere.
	train, held := filepath.Join(dir, "train.parquet"), filepath.Join(dir, "held.parquet")
	mustRun(t, "gen", "lda", "--docs", "4000", "--vocab", "1000", "--k", "5", "--seed", "3", "--out", train)
	mustRun(t, "gen", "lda", "--docs", "400", "--vocab", "1000", "--k", "5", "--seed", "4", "--out", held)
	mustRun(t, "fit", "lda", "--input", train, "--k", "3,8", "--heldout", held, "--out", filepath.Join(dir, "own-k{k}.json"))
	mustRun(t, "fit", "lda", "--input", train, "--k", "3,8", "--heldout", held, "--sweep-start", "shared", "--out", filepath.Join(dir, "shared-k{k}.json"))
	mustRun(t, "fit", "lda", "--input", train, "--k", "3", "--out", filepath.Join(dir, "single.json"))
	var ms []*models.Model
	for _, f := range []string{"own-k3.json", "single.json", "shared-k3.json"} {
		m, err := models.Read(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	same := func(a, b *models.Model) bool {
		return slices.Equal(a.Alpha, b.Alpha) && slices.EqualFunc(a.Topics, b.Topics, slices.Equal)
	}
	if !same(ms[0], ms[1]) || same(ms[2], ms[1]) {
		t.Errorf("k=3: the sweep's model is fit --k 3's: %v (want true); with --sweep-start shared: %v (want false)", same(ms[0], ms[1]), same(ms[2], ms[1]))
	}
	js := mustRun(t, "fit", "lda", "--input", in, "--k", "3:7:2", "--json", "--out", filepath.Join(dir, "j.json"))
	var sw struct {
		Scores []struct {
			K          int     `json:"k"`
			Perplexity float64 `json:"perplexity"`
		} `json:"scores"`
		Recommended int `json:"recommended"`
	}
	if err := json.Unmarshal([]byte(js), &sw); err != nil || len(sw.Scores) != 3 || sw.Scores[1].K != 5 || sw.Recommended != 5 {
		t.Errorf("--json: %v %+v", err, sw)
	}
	if _, err := os.Stat(filepath.Join(dir, "j-k7.json")); err != nil {
		t.Errorf("--out without {k}: %v", err)
	}
	// report --sweep shows the recommended k's model with the curves.
	sp := filepath.Join(dir, "sweep.json")
	if err := os.WriteFile(sp, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "report", "--sweep", sp, "--out", filepath.Join(dir, "r.html"))
	page := string(readFile(t, filepath.Join(dir, "r.html")))
	if !strings.Contains(page, "streamfit report: j-k5.json") || !strings.Contains(page, `"sweep":{"source":"sweep.json","k":[3,5,7]`) {
		t.Errorf("report --sweep: the page does not show j-k5.json with the sweep's curves")
	}
	for _, args := range [][]string{
		{"fit", "gmm", "--input", in, "--k", "2,3"},
		{"fit", "lda", "--input", in, "--k", "3,x"},
		{"fit", "lda", "--input", in, "--k", "3,3"},
		{"fit", "lda", "--input", in, "--k", "9:3"},
		{"fit", "lda", "--input", in, "--k", "3,5", "--sweep-start", "mine"},
	} {
		if code, _, msg := streamfit(t, args...); code != 2 {
			t.Errorf("%q: exit %d, %s", args, code, msg)
		}
	}
}

// TestFitSweepFromStats: `stats --k 2,4,6` over two shards, merged, then
// `fit --from-stats --k 2,4,6 --input --heldout` writes the model files of
// the sweep over the documents (`fit --input --k 2,4,6 --heldout`) byte for
// byte and prints the same scores, whatever --workers; without --input
// it writes the spectral fits, with --em-start the EM passes' starts;
// statistics of another largest k, and
// --heldout without --input, are refused.
func TestFitSweepFromStats(t *testing.T) {
	const d = 150
	docs := corpusDocs(t, synth.LDAConfig{Docs: 2500, Vocab: d, K: 6, Alpha0: 1, DocLen: 60, Seed: 21})
	p := tempPaths(t)
	for name, cut := range map[string][2]int{"a": {0, 1000}, "b": {1000, 2000}, "train": {0, 2000}, "held": {2000, 2500}} {
		writeDocword(t, p("docword."+name+".txt"), docs, d, cut[0], cut[1])
	}
	common := []string{"--batch-rows", "250", "--progress", "off"}
	scores := func(js string) string {
		t.Helper()
		var sw struct {
			Scores      json.RawMessage `json:"scores"`
			Recommended int             `json:"recommended"`
		}
		if err := json.Unmarshal([]byte(js), &sw); err != nil {
			t.Fatalf("%v: %s", err, js)
		}
		return fmt.Sprintf("%s recommended %d", sw.Scores, sw.Recommended)
	}
	direct := scores(mustRun(t, append([]string{"fit", "lda", "--input", p("docword.train.txt"), "--k", "2,4,6", "--heldout", p("docword.held.txt"),
		"--json", "--no-timing", "--workers", "2", "--out", p("d-k{k}.json")}, common...)...))
	for _, w := range []string{"1", "3"} {
		for _, phase := range []string{"1", "2"} {
			basis := map[string]string{"1": "", "2": "m1.stats"}[phase]
			for _, s := range []string{"a", "b"} {
				mustRun(t, append(append(statsArgs(p, phase, s+phase+".stats", basis), "--k", "2,4,6", "--workers", w, p("docword."+s+".txt")), common...)...)
			}
			mergeFiles(t, p, "m"+phase+".stats", "b"+phase+".stats", "a"+phase+".stats")
		}
		got := scores(mustRun(t, append([]string{"fit", "lda", "--from-stats", p("m2.stats"), "--input", p("docword.train.txt"), "--k", "2,4,6",
			"--heldout", p("docword.held.txt"), "--json", "--no-timing", "--workers", w, "--out", p("s-k{k}.json")}, common...)...))
		if got != direct {
			t.Errorf("--workers %s: the scores from statistics differ:\n%s\nfrom the documents:\n%s", w, got, direct)
		}
		for _, k := range []string{"2", "4", "6"} {
			if !bytes.Equal(readFile(t, p("s-k"+k+".json")), readFile(t, p("d-k"+k+".json"))) {
				t.Errorf("--workers %s: k=%s: the model from statistics differs from the sweep over the documents", w, k)
			}
		}
	}
	if code, _, msg := streamfit(t, "fit", "lda", "--from-stats", p("m2.stats"), "--k", "2,4,6", "--sweep-start", "own", "--out", p("own-k{k}.json")); code != 2 || !strings.Contains(msg, "each k's statistics") {
		t.Errorf("--from-stats --sweep-start own: exit %d: %s", code, msg)
	}
	// Each k's statistics of its own ('m2-k{k}.stats'): each k's own
	// start, the models of the sweep over the documents.
	for _, k := range []string{"2", "4", "6"} {
		for _, phase := range []string{"1", "2"} {
			basis := map[string]string{"1": "", "2": "e1-k" + k + ".stats"}[phase]
			for _, s := range []string{"a", "b"} {
				mustRun(t, append(append(statsArgs(p, phase, s+phase+"-k"+k+".stats", basis), "--k", k, p("docword."+s+".txt")), common...)...)
			}
			mergeFiles(t, p, "e"+phase+"-k"+k+".stats", "b"+phase+"-k"+k+".stats", "a"+phase+"-k"+k+".stats")
		}
	}
	each := scores(mustRun(t, append([]string{"fit", "lda", "--from-stats", p("e2-k{k}.stats"), "--input", p("docword.train.txt"), "--k", "2,4,6",
		"--heldout", p("docword.held.txt"), "--json", "--no-timing", "--out", p("e-k{k}.json")}, common...)...))
	// The vocabulary is whitened exactly: the sweep took the smaller k's
	// starts from the largest k's passes, the same starts as their own.
	unshared := func(s string) string { return strings.ReplaceAll(s, `"shared_start": true`, `"shared_start": false`) }
	if unshared(each) != unshared(direct) {
		t.Errorf("the scores from each k's statistics differ:\n%s\nfrom the documents:\n%s", each, direct)
	}
	for _, k := range []int{2, 4, 6} {
		a, errA := models.Read(p(fmt.Sprintf("e-k%d.json", k)))
		b, errB := models.Read(p(fmt.Sprintf("d-k%d.json", k)))
		if errA != nil || errB != nil || !slices.Equal(a.Alpha, b.Alpha) || !slices.EqualFunc(a.Topics, b.Topics, slices.Equal) {
			t.Errorf("k=%d: the model from its own statistics differs from the sweep's (%v, %v)", k, errA, errB)
		}
	}
	// No documents: the spectral fits.
	code, _, msg := streamfit(t, "fit", "lda", "--from-stats", p("m2.stats"), "--k", "2,4,6", "--progress", "off", "--out", p("sp-k{k}.json"))
	if code != 0 || !strings.Contains(msg, "need the documents") {
		t.Errorf("from statistics alone: exit %d: %s", code, msg)
	}
	for _, k := range []int{2, 4, 6} {
		if m, err := models.Read(p(fmt.Sprintf("sp-k%d.json", k))); err != nil || m.K != k || m.Fit.EM != nil {
			t.Errorf("k=%d from statistics alone: %v", k, err)
		}
	}
	// --em-start: the starts of the EM passes; the largest k's is the
	// single fit's from the same statistics.
	code, _, msg = streamfit(t, "fit", "lda", "--from-stats", p("m2.stats"), "--k", "2,4,6", "--em-start", "--progress", "off", "--out", p("st-k{k}.json"))
	if code != 0 || !strings.Contains(msg, "start of every k's EM passes") {
		t.Errorf("--em-start: exit %d: %s", code, msg)
	}
	mustRun(t, "fit", "lda", "--from-stats", p("m2.stats"), "--em-start", "--progress", "off", "--out", p("st-single.json"))
	a, errA := models.Read(p("st-k6.json"))
	b, errB := models.Read(p("st-single.json"))
	if errA != nil || errB != nil || a.Fit.Solver.Name != "simultaneous" || !slices.Equal(a.Alpha, b.Alpha) || !slices.EqualFunc(a.Topics, b.Topics, slices.Equal) {
		t.Errorf("--em-start: the sweep's start of k=6 differs from the single fit's (%v, %v)", errA, errB)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--k", "2,4", "--input", p("docword.train.txt")}, 1, "largest k"},
		{[]string{"--k", "2,4,6", "--heldout", p("docword.held.txt")}, 2, "give --input"},
	} {
		args := append([]string{"fit", "lda", "--from-stats", p("m2.stats"), "--out", p("x-k{k}.json")}, c.args...)
		if code, _, msg := streamfit(t, args...); code != c.code || !strings.Contains(msg, c.want) {
			t.Errorf("%q: exit %d: %s", c.args, code, msg)
		}
	}
}
