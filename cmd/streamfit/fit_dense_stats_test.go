package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestFitStatsThenRows: `fit MODEL --from-stats S --input X` runs the
// likelihood passes of a model that has them over X from the merged
// statistics S of two shards, and gives the model of `fit MODEL --input X`
// byte for byte (gmm from the statistics of its EM start, a variance per
// component; a Gaussian hmm). Without --input it is the moment fit, with a
// warning that says what the rows would add; statistics of another moment
// fit start the passes with a warning; more components than --k are
// refused.
func TestFitStatsThenRows(t *testing.T) {
	p := tempPaths(t)
	mustRun(t, "gen", "gmm", "--rows", "4000", "--d", "5", "--k", "3", "--seed", "1", "--out", p("g.parquet"), "--progress", "off")
	mustRun(t, "gen", "hmm", "--d", "4", "--k", "3", "--seqs", "200", "--len", "40", "--seed", "2", "--out", p("h.parquet"), "--progress", "off")
	for _, c := range []struct {
		model, input string
		stats, fit   []string // settings of the statistics, of both
		cut          string   // the shards' rows
	}{
		{"gmm", p("g.parquet"), []string{"--differing"}, []string{"--k", "3"}, "2000"},
		{"hmm", p("h.parquet"), nil, []string{"--k", "3", "--group-column", "group"}, "4000"},
	} {
		common := append(append([]string{}, c.fit...), "--batch-rows", "500", "--progress", "off")
		mustRun(t, append([]string{"fit", c.model, "--input", c.input, "--no-timing", "--out", p(c.model + "-fit.json")}, common...)...)
		var last, said string
		for phase := 1; ; phase++ {
			var shards []string
			for i, docs := range []string{"0:" + c.cut, c.cut + ":"} {
				out := p(c.model + "-" + string(rune('a'+i)) + ".stats")
				args := append([]string{"stats", c.model, "--phase", string(rune('0' + phase)), "--docs", docs, "--out", out}, common...)
				args = append(args, c.stats...)
				if last != "" {
					args = append(args, "--basis", last)
				}
				code, _, msg := streamfit(t, append(args, c.input)...)
				if code != 0 {
					if strings.Contains(msg, "hold all a fit needs") {
						break
					}
					t.Fatalf("%s phase %d: %s", c.model, phase, msg)
				}
				said += msg
				shards = append(shards, out)
			}
			if len(shards) == 0 {
				break
			}
			last = p(c.model + "-merged" + string(rune('0'+phase)) + ".stats")
			mustRun(t, append([]string{"merge", "--out", last}, shards...)...)
		}
		if !strings.Contains(said, "--from-stats") || !strings.Contains(said, "--input ROWS") {
			t.Errorf("%s: stats does not say the rows follow the last pass:\n%s", c.model, said)
		}
		code, _, msg := streamfit(t, append([]string{"fit", c.model, "--from-stats", last, "--input", c.input, "--no-timing", "--out", p(c.model + "-ref.json")}, common...)...)
		if code != 0 {
			t.Fatalf("%s: fit --from-stats --input: %s", c.model, msg)
		}
		want, _ := os.ReadFile(p(c.model + "-fit.json"))
		got, _ := os.ReadFile(p(c.model + "-ref.json"))
		if !bytes.Equal(got, want) || len(want) == 0 {
			t.Errorf("%s: the model of --from-stats --input differs from fit --input's:\n%s\n%s", c.model, got, want)
		}
		code, _, msg = streamfit(t, append([]string{"fit", c.model, "--from-stats", last, "--out", p(c.model + "-mom.json")}, common...)...)
		if code != 0 || !strings.Contains(msg, "moment fit of "+last+" alone") || !strings.Contains(msg, "--input") {
			t.Errorf("%s: fit --from-stats without the rows: exit %d, %q", c.model, code, msg)
		}
		code, _, msg = streamfit(t, "fit", c.model, "--from-stats", last, "--em-passes", "0", "--out", p(c.model+"-mom0.json"), "--progress", "off")
		if code != 0 || strings.Contains(msg, "warning") {
			t.Errorf("%s: fit --from-stats --em-passes 0: exit %d, %q", c.model, code, msg)
		}
		code, _, msg = streamfit(t, append([]string{"fit", c.model, "--from-stats", last, "--input", c.input, "--out", p("x.json"), "--k", "2"}, common[2:]...)...)
		if code == 0 || !strings.Contains(msg, "give --k 3") {
			t.Errorf("%s: --k below the statistics': exit %d, %q", c.model, code, msg)
		}
	}
	// Statistics of gmm's moment fit alone (a common variance) are not
	// those its EM passes start from: they start from it, with a warning
	// naming the setting.
	mustRun(t, "stats", "gmm", "--k", "3", "--phase", "1", "--out", p("common1.stats"), "--progress", "off", p("g.parquet"))
	mustRun(t, "stats", "gmm", "--k", "3", "--phase", "2", "--basis", p("common1.stats"), "--out", p("common2.stats"), "--progress", "off", p("g.parquet"))
	code, _, msg := streamfit(t, "fit", "gmm", "--from-stats", p("common2.stats"), "--input", p("g.parquet"), "--out", p("x.json"), "--progress", "off")
	if code != 0 || !strings.Contains(msg, "another moment fit") || !strings.Contains(msg, `"differing":true`) || !strings.Contains(msg, "EM passes") {
		t.Errorf("gmm from the statistics of the moment fit alone: exit %d, %q", code, msg)
	}
	if _, err := os.Stat(p("x.json")); err != nil {
		t.Errorf("no model from the statistics of another moment fit: %v", err)
	}
}
