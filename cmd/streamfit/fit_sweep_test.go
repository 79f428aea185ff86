package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/models"
)

// TestFitSweep: fit lda with a list of k writes a model per k, prints a
// row of scores per k and recommends the k of the generated truth; --json
// gives the same table; a list for a dense model or a bad list is a usage
// error.
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
	for _, args := range [][]string{
		{"fit", "gmm", "--input", in, "--k", "2,3"},
		{"fit", "lda", "--input", in, "--k", "3,x"},
		{"fit", "lda", "--input", in, "--k", "3,3"},
		{"fit", "lda", "--input", in, "--k", "9:3"},
	} {
		if code, _, msg := streamfit(t, args...); code != 2 {
			t.Errorf("%q: exit %d, %s", args, code, msg)
		}
	}
}
