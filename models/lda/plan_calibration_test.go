package lda

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// TestPlanCalibration checks the plan's cost model against the CPU of
// default fits recorded by bench/scale/calibrate.sh (testdata/
// plan_costs.tsv): the four corpora of bench/real at k = 10, 20, 50 and
// 100, and the generated and repeated-Debian corpora of bench/scale. For
// each fit, the plan's prediction for the passes it took (Plan.Taken: its
// spectral passes, EM passes on the sample and over every document) is
// within 1.5 times the CPU the whole process used.
func TestPlanCalibration(t *testing.T) {
	f, err := os.Open("testdata/plan_costs.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type fit struct {
		d, k                       int
		docs, nnz, tokens          int64
		format                     string
		spectral, full, samp, half int
		total                      float64
	}
	fits := map[string]*fit{}
	var order []string
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 9 {
			t.Fatalf("testdata/plan_costs.tsv: %q", sc.Text())
		}
		key := c[0] + " k=" + c[1]
		x := fits[key]
		if x == nil {
			x = &fit{format: "parquet"}
			x.k, _ = strconv.Atoi(c[1])
			x.d, _ = strconv.Atoi(c[2])
			x.docs, _ = strconv.ParseInt(c[3], 10, 64)
			x.nnz, _ = strconv.ParseInt(c[4], 10, 64)
			x.tokens, _ = strconv.ParseInt(c[5], 10, 64)
			if strings.Contains(c[0], ".docword") {
				x.format = "docword"
			}
			fits[key] = x
			order = append(order, key)
		}
		stage := c[7]
		switch {
		case stage == "total":
			x.total, _ = strconv.ParseFloat(c[8], 64)
		case strings.HasSuffix(stage, "-second-moment"), strings.HasSuffix(stage, "-third-moment"):
			x.spectral++
		case strings.HasSuffix(stage, "-em-sample"):
			x.samp++
		case strings.HasSuffix(stage, "-em-sample-half"):
			x.samp++
			x.half++
		case strings.HasSuffix(stage, "-em"):
			x.full++
		}
	}
	worst := 1.0
	for _, key := range order {
		x := fits[key]
		cfg := Config{K: x.k, Alpha0: 1, Workers: 2, Third: Explicit, EM: EM{Passes: 10, FitAlpha: true}}
		// planFit: the reference machine's figures, as recorded.
		p, err := planFit(stream.Info{Terms: x.d, Rows: x.docs, NNZ: x.nnz, Format: x.format}, x.tokens, cfg)
		if err != nil {
			t.Fatal(err)
		}
		em := &models.EMStats{Passes: x.full + x.samp}
		if x.samp > 0 {
			em.Sample = &models.EMSample{Passes: x.samp, HalfPasses: x.half}
		}
		m := &models.Model{Fit: &models.FitStats{Passes: x.spectral + x.full + x.samp, EM: em}}
		got := p.Taken(m)
		r := got / x.total
		worst = max(worst, r, 1/r)
		t.Logf("%-34s predicted %6.1fs, used %6.1fs: %.2f (%d spectral, %d sample, %d full EM passes)", key, got, x.total, r, x.spectral, x.samp, x.full)
		if r > 1.5 || r < 1/1.5 {
			t.Errorf("%s: the plan predicts %.1f CPU-s for the passes taken, the fit used %.1f (%.2f×)", key, got, x.total, r)
		}
	}
	t.Logf("worst ratio %.2f", worst)
}
