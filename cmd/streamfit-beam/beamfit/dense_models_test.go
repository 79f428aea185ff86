package beamfit

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"iter"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/implicit"

	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestPipelineDenseModels runs the fits of GMM and ICA (with d = 40 above
// --exact-dim 16: the sketched path, 5 and 7 passes at the defaults), ICA on the exact
// path, the three-view mixture, the HMM of sequences and the Markov chain
// and HMM of snapshot sets on prism over four Parquet files of three row
// groups each (twelve work units), and checks that model.json is
// byte-identical to `streamfit fit MODEL` with the same flags over the
// union of the files in one file (the moment fits of GMM and the HMM:
// --em-passes 0, the same bytes as before the pipeline had their likelihood
// passes). The row groups of the grouped models cut
// sequences and sets (the unit where a group begins owns it). With k above
// what the moments support (the three-view mixture, the HMM) both fit the
// components the moments give, and model.json records, as fit prints, the
// warning that says so.
func TestPipelineDenseModels(t *testing.T) {
	const rows = 600
	type gen = func(context.Context) iter.Seq2[*stream.Dense, error]
	must := func(g interface {
		Rows(context.Context) iter.Seq2[*stream.Dense, error]
	}, err error) gen {
		if err != nil {
			t.Fatal(err)
		}
		return g.Rows
	}
	sketched := []string{"--exact-dim", "16", "--k", "3", "--seed", "5"}
	for _, c := range []struct {
		name, model string
		gen         func() gen
		group       bool
		flags       []string
		rows        int64 // per file (0: rows)
		// warn begins the warning that model.json records and fit prints
		// (k above what the moments support: the components they give).
		warn string
	}{
		{"gmm-sketched", "gmm", func() gen {
			return must(synth.NewGMM(synth.GMMConfig{Rows: 4 * rows, D: 40, K: 3, Seed: 7, BatchRows: 50}))
		}, false, sketched, 0, ""},
		{"gmm-sketched-differing", "gmm", func() gen {
			return must(synth.NewGMM(synth.GMMConfig{Rows: 4 * rows, D: 40, K: 3, Seed: 7, BatchRows: 50, Differing: true}))
		}, false, append([]string{"--differing", "--oversample", "6", "--power-iters", "1"}, sketched...), 0, ""},
		{"ica-sketched", "ica", func() gen {
			return must(synth.NewICA(synth.ICAConfig{Rows: 4 * rows, D: 40, K: 3, Seed: 3, BatchRows: 50}))
		}, false, sketched, 0, ""},
		{"ica", "ica", func() gen {
			return must(synth.NewICA(synth.ICAConfig{Rows: 4 * rows, D: 5, K: 3, Seed: 3, BatchRows: 50}))
		}, false, []string{"--k", "3", "--seed", "5"}, 0, ""},
		{"multiview", "multiview", func() gen {
			return must(synth.NewMultiView(synth.MultiViewConfig{Rows: 4 * rows, Dims: [3]int{3, 3, 4}, K: 2, Seed: 3, BatchRows: 50}))
		}, false, []string{"--k", "2", "--seed", "5"}, 0, ""},
		// k above a view's width (3): the components the cross moments of
		// pass 1 support, in pass 2 and the fit alike.
		{"multiview-fewer", "multiview", func() gen {
			return must(synth.NewMultiView(synth.MultiViewConfig{Rows: 4 * rows, Dims: [3]int{3, 3, 4}, K: 2, Seed: 3, BatchRows: 50}))
		}, false, []string{"--k", "5", "--seed", "5"}, 0, "of the k=5 components (views of 3, 3 and 4 columns)"},
		// Sequences of 6 steps, row groups of 200 rows: a cut every third
		// sequence (with --windows, windows across the cut).
		{"hmm", "hmm", func() gen {
			return must(synth.NewHMMSeq(synth.HMMSeqConfig{Seqs: 4 * rows / 6, Len: 6, K: 2, D: 4, Seed: 3, BatchRows: 60}))
		}, true, []string{"--k", "2", "--seed", "5"}, 0, ""},
		{"hmm-windows", "hmm", func() gen {
			return must(synth.NewHMMSeq(synth.HMMSeqConfig{Seqs: 4 * rows / 6, Len: 6, K: 2, D: 4, Seed: 3, BatchRows: 60}))
		}, true, []string{"--k", "2", "--seed", "5", "--windows"}, 0, ""},
		// k above d (4): the states the cross moments of consecutive
		// steps of pass 1 support, in pass 2 and the fit alike.
		{"hmm-fewer", "hmm", func() gen {
			return must(synth.NewHMMSeq(synth.HMMSeqConfig{Seqs: 4 * rows / 6, Len: 6, K: 2, D: 4, Seed: 3, BatchRows: 60}))
		}, true, []string{"--k", "7", "--seed", "5"}, 0, "of the 7 states (k=7 exceeds the dimension d=4"},
		{"markov", "markov", func() gen {
			return must(synth.NewSnapshots(synth.SnapshotConfig{Sets: 4 * rows / 3, PerSet: 3, K: 3, Seed: 3, BatchRows: 60}))
		}, true, []string{"--k", "3", "--seed", "5", "--alpha0", "1", "--r", "0.3"}, 0, ""},
		{"hmm-snapshot", "hmm-snapshot", func() gen {
			return must(synth.NewSnapshots(synth.SnapshotConfig{Sets: 4 * 5 * rows / 3, PerSet: 3, K: 3, M: 5, Seed: 3, BatchRows: 60}))
		}, true, []string{"--k", "3", "--seed", "5", "--alpha0", "1", "--r", "0.3"}, 5 * rows, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			n := cmp.Or(c.rows, rows)
			files := denseFiles(t, dir, c.gen(), n, int(n/3))
			fitFlags := c.flags
			if c.model == "gmm" || c.model == "hmm" {
				// The moment fit alone (TestPipelineDenseEM checks the
				// likelihood passes).
				fitFlags = append([]string{"--em-passes", "0"}, fitFlags...)
			}
			s := settingsOf(t, c.model, fitFlags...)
			s.Workers = 2
			read := stream.Options{}
			flags := append([]string{"--batch-rows", fmt.Sprint(readRows), "--workers", "2", "--progress", "off"}, fitFlags...)
			if c.group {
				read.GroupColumn = "group"
				flags = append(flags, "--group-column", "group")
			}
			model, stats := filepath.Join(dir, "model.json"), filepath.Join(dir, "last.stats")
			o := Options{Fit: s, Out: Output{Model: model, Stats: stats, NoTiming: true}}
			o.Read = stream.Options{BatchRows: readRows, Workers: 2, GroupColumn: read.GroupColumn}
			if err := Run(context.Background(), "prism", files, o); err != nil {
				t.Fatal(err)
			}
			whole := filepath.Join(dir, "whole.json")
			fit := []string{"fit", c.model, "--no-timing", "--input", filepath.Join(dir, "all.parquet"), "--out", whole}
			printed := run(t, append(fit, flags...)...)
			got, want := readFile(t, model), readFile(t, whole)
			if !bytes.Equal(got, want) {
				t.Fatalf("the pipeline's model differs from streamfit fit %s over the union:\n%s\n%s", c.model, got, want)
			}
			if c.warn != "" {
				warned(t, got, printed, c.warn)
			}
			st, err := implicit.ReadDenseStats(stats)
			if err != nil {
				t.Fatal(err)
			}
			if sk, want := st.Header.Sketch != "", slices.Contains(c.flags, "--exact-dim"); sk != want {
				t.Errorf("the last pass (pass %d) is sketched: %v, want %v", st.Header.Phase, sk, want)
			}
			if c.model == "gmm" && st.Header.Phase != s.denseStages() {
				// The sketched GMM takes every pass the pipeline has room for.
				t.Errorf("the last pass is pass %d, the pipeline has room for %d", st.Header.Phase, s.denseStages())
			}
			units, err := PlanDense(context.Background(), files, read)
			if err != nil {
				t.Fatal(err)
			}
			if len(units) != 12 {
				t.Errorf("%d work units, want 4 files × 3 row groups", len(units))
			}
			cuts := 0
			if c.group {
				cuts = groupCuts(t, filepath.Join(dir, "all.parquet"), n, files, units)
				if cuts == 0 {
					t.Error("no work unit begins inside a group: the test cannot tell whole groups from cut ones")
				}
			}
			t.Logf("%s: %d work units (%d begin inside a group), %d passes, %d bytes of model.json identical", c.model, len(units), cuts, st.Header.Phase, len(got))
		})
	}
}

// groupCuts counts the work units that begin inside a group of rows (a
// sequence, a snapshot set): all is the union of the files, of n rows each.
func groupCuts(t *testing.T, all string, n int64, files []string, units []Unit) int {
	t.Helper()
	src, err := stream.OpenDense(all, stream.Options{GroupColumn: "group"})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close(src)
	rows, err := stream.CollectDense(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	cuts := 0
	for _, u := range units {
		i := int64(slices.Index(files, u.Input.Path))*n + u.Input.Docs[0]
		if u.Input.Docs[0] > 0 && rows.Group[i-1] == rows.Group[i] {
			cuts++
		}
	}
	return cuts
}

// settingsOf returns the settings of a fit of model that the flags args
// set (Bind), as the command line sets them.
func settingsOf(t *testing.T, model string, args ...string) Settings {
	t.Helper()
	fs := flag.NewFlagSet(model, flag.ContinueOnError)
	s, check, err := Bind(fs, model)
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := check(); err != nil {
		t.Fatal(err)
	}
	return *s
}

// warned checks that model.json records a warning that holds want, and
// that fit printed the same warning (printed: its output).
func warned(t *testing.T, model []byte, printed, want string) {
	t.Helper()
	var m struct {
		Stats struct {
			Warnings []string `json:"warnings"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(model, &m); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(m.Stats.Warnings, func(w string) bool { return strings.Contains(w, want) })
	if i < 0 {
		t.Fatalf("model.json records no warning with %q: %q", want, m.Stats.Warnings)
	}
	w := m.Stats.Warnings[i]
	if !strings.Contains(printed, "warning: "+w) {
		t.Errorf("fit did not print the warning %q:\n%s", w, printed)
	}
	t.Logf("warning: %s", w)
}
