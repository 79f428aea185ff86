package beamfit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// TestPipelineDenseEM runs the default fits of GMM (EM passes) and of the
// HMM of one-hot and of Gaussian sequences (Baum–Welch passes; of Gaussian
// ones after a pass that starts the variances) on prism, over the same
// rows cut two ways — four Parquet files of three row groups (twelve work
// units, two goroutines each) and two files of twelve smaller ones
// (twenty-four units, one goroutine) — and checks that model.json is byte-identical to
// `streamfit fit MODEL` (its default likelihood passes) over the union in
// one file, that the passes ran and stopped by the rule before the cap,
// and that the log-likelihood never decreased from pass to pass (the HMM
// of Gaussian rows: with the variances in model.json). The HMM with k
// above the symbols or the dimension starts the states the moments lack
// as perturbed copies, with fit's warning in model.json.
func TestPipelineDenseEM(t *testing.T) {
	type gen = func(context.Context) iter.Seq2[*stream.Dense, error]
	gmmGen := func() (gen, error) {
		g, err := synth.NewGMM(synth.GMMConfig{Rows: 24000, D: 6, K: 3, Sigma2: 4, Seed: 7, BatchRows: 100, Differing: true})
		if err != nil {
			return nil, err
		}
		return g.Rows, nil
	}
	for _, c := range []struct {
		name  string
		gen   func() (gen, error)
		group bool
		flags []string
		rows  int // in all; row groups of rows/12 in four files, rows/24 in two
		// capped says the passes reach the cap (else the rule stops them).
		capped bool
		// warn is part of the warning that model.json records and fit
		// prints (k above what the moments support).
		warn string
	}{
		{"gmm", gmmGen, false, []string{"--k", "3", "--seed", "5"}, 24000, false, ""},
		// The cap reached before the rule fires.
		{"gmm", gmmGen, false, []string{"--k", "3", "--seed", "5", "--em-passes", "3", "--em-tol", "1e-12"}, 24000, true, ""},
		// More rows than the sample Start runs EM on in memory (20000), so
		// the passes over all of them refine it.
		// (The HMM below: sequences of 6 steps, row groups of 200 or 100
		// rows: units cut sequences, and own those that begin in them.)
		{"hmm", func() (gen, error) {
			g, err := synth.NewHMMSeq(synth.HMMSeqConfig{Seqs: 400, Len: 6, K: 2, D: 4, Seed: 3, BatchRows: 60, Discrete: true})
			if err != nil {
				return nil, err
			}
			return g.Rows, nil
		}, true, []string{"--k", "2", "--seed", "5", "--discrete"}, 2400, false, ""},
		// k above the symbols (4): the states the moments give, and
		// Baum–Welch passes from them and perturbed copies up to k.
		{"hmm", func() (gen, error) {
			g, err := synth.NewHMMSeq(synth.HMMSeqConfig{Seqs: 400, Len: 6, K: 2, D: 4, Seed: 3, BatchRows: 60, Discrete: true})
			if err != nil {
				return nil, err
			}
			return g.Rows, nil
		}, true, []string{"--k", "6", "--seed", "5", "--discrete"}, 2400, false, "Baum–Welch starts the other 3 as perturbed copies"},
		// Gaussian rows (the sequences of TestPipelineDenseModels): a pass
		// that starts the variances, then Baum–Welch passes of a Gaussian
		// per state, the variances in model.json.
		{"hmm", func() (gen, error) {
			g, err := synth.NewHMMSeq(synth.HMMSeqConfig{Seqs: 400, Len: 6, K: 2, D: 4, Seed: 3, BatchRows: 60})
			if err != nil {
				return nil, err
			}
			return g.Rows, nil
		}, true, []string{"--k", "2", "--seed", "5", "--em-passes", "30"}, 2400, false, ""},
		// k above d (4): the states the moments give, and Baum–Welch
		// passes from them and perturbed copies up to k.
		{"hmm", func() (gen, error) {
			g, err := synth.NewHMMSeq(synth.HMMSeqConfig{Seqs: 400, Len: 6, K: 2, D: 4, Seed: 3, BatchRows: 60})
			if err != nil {
				return nil, err
			}
			return g.Rows, nil
		}, true, []string{"--k", "6", "--seed", "5"}, 2400, false, "Baum–Welch starts the other 3 as perturbed copies"},
		// A variance per state and coordinate (--covariance diag): the
		// start pass and the Baum–Welch passes sum per coordinate, and
		// model.json records var_diag, k rows of d, and no var.
		{"hmm", func() (gen, error) {
			g, err := synth.NewHMMSeq(synth.HMMSeqConfig{Seqs: 400, Len: 6, K: 2, D: 4, Seed: 3, BatchRows: 60})
			if err != nil {
				return nil, err
			}
			return g.Rows, nil
		}, true, []string{"--k", "2", "--seed", "5", "--em-passes", "30", "--covariance", "diag"}, 2400, false, ""},
	} {
		t.Run(strings.Join(append([]string{c.name}, c.flags...), " "), func(t *testing.T) {
			var first []byte
			for _, layout := range []struct {
				files, workers int
			}{{4, 2}, {2, 1}} {
				dir := t.TempDir()
				g, err := c.gen()
				if err != nil {
					t.Fatal(err)
				}
				files := denseFiles(t, dir, g, int64(c.rows/layout.files), c.rows/12/(4/layout.files))
				s := settingsOf(t, c.name, c.flags...)
				s.Workers = layout.workers
				flags := append([]string{"--batch-rows", fmt.Sprint(readRows), "--workers", fmt.Sprint(layout.workers), "--progress", "off"}, c.flags...)
				o := Options{Fit: s, Out: Output{Model: filepath.Join(dir, "model.json"), NoTiming: true}}
				o.Read = stream.Options{BatchRows: readRows, Workers: layout.workers}
				if c.group {
					o.Read.GroupColumn = "group"
					flags = append(flags, "--group-column", "group")
				}
				if err := Run(context.Background(), "prism", files, o); err != nil {
					t.Fatal(err)
				}
				whole := filepath.Join(dir, "whole.json")
				printed := run(t, append([]string{"fit", c.name, "--no-timing", "--input", filepath.Join(dir, "all.parquet"), "--out", whole}, flags...)...)
				got := readFile(t, o.Out.Model)
				if want := readFile(t, whole); !bytes.Equal(got, want) {
					t.Fatalf("%d files: the pipeline's model differs from streamfit fit %s over the union:\n%s\n%s", layout.files, c.name, got, want)
				}
				if c.warn != "" {
					warned(t, got, printed, c.warn)
				}
				if first == nil {
					first = got
				} else if !bytes.Equal(got, first) {
					t.Fatalf("%d files, %d workers: another model than with other work units", layout.files, layout.workers)
				}
				if c.name == "hmm" && !slices.Contains(c.flags, "--discrete") {
					gaussVar(t, got, slices.Contains(c.flags, "diag"))
				}
				em := emRecord(t, got)
				switch {
				case c.capped && (em.Passes != s.emCap() || em.Converged):
					t.Fatalf("%d files: passes %+v: want the cap of %d", layout.files, em, s.emCap())
				case !c.capped && (em.Passes < 2 || em.Passes >= s.emCap() || !em.Converged):
					t.Fatalf("%d files: passes %+v: want passes that the rule stopped before the cap of %d", layout.files, em, s.emCap())
				}
				for i := 1; i < len(em.LogLik); i++ {
					if em.LogLik[i] < em.LogLik[i-1] {
						t.Errorf("the log-likelihood fell from %.9g to %.9g at pass %d", em.LogLik[i-1], em.LogLik[i], i+1)
					}
				}
				t.Logf("%s, %d files: %d bytes identical; %d passes, log-likelihood per row %.6g → %.6g", c.name, layout.files, len(got), em.Passes, em.LogLik[0], em.LogLik[len(em.LogLik)-1])
			}
		})
	}
}

// gaussVar checks that a model file of the HMM of Gaussian rows records
// a variance for each of its k states, each positive, and no var_diag;
// with diag (--covariance diag), var_diag of k rows of d variances, each
// positive, and no var.
func gaussVar(t *testing.T, model []byte, diag bool) {
	t.Helper()
	var m struct {
		K       int         `json:"k"`
		D       int         `json:"d"`
		Var     []float64   `json:"var"`
		VarDiag [][]float64 `json:"var_diag"`
	}
	if err := json.Unmarshal(model, &m); err != nil {
		t.Fatal(err)
	}
	nonPositive := func(v float64) bool { return !(v > 0) }
	if !diag {
		if len(m.Var) != m.K || slices.ContainsFunc(m.Var, nonPositive) || m.VarDiag != nil {
			t.Fatalf("variances %v (var_diag %v) of the %d states", m.Var, m.VarDiag, m.K)
		}
		return
	}
	if len(m.VarDiag) != m.K || m.Var != nil || m.D < 1 || slices.ContainsFunc(m.VarDiag, func(row []float64) bool {
		return len(row) != m.D || slices.ContainsFunc(row, nonPositive)
	}) {
		t.Fatalf("var_diag %v (var %v) of the %d states of dimension %d: want %d rows of %d positive variances and no var", m.VarDiag, m.Var, m.K, m.D, m.K, m.D)
	}
}

// emRecord returns the record of the likelihood passes in a model file of
// GMM or the HMM.
func emRecord(t *testing.T, model []byte) (em struct {
	Passes    int       `json:"passes"`
	LogLik    []float64 `json:"loglik"`
	Converged bool      `json:"converged"`
}) {
	t.Helper()
	var m struct {
		Stats struct {
			EM *struct {
				Passes    int       `json:"passes"`
				LogLik    []float64 `json:"loglik"`
				Converged bool      `json:"converged"`
			} `json:"em"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(model, &m); err != nil {
		t.Fatal(err)
	}
	if m.Stats.EM == nil {
		t.Fatal("the model records no likelihood passes")
	}
	return *m.Stats.EM
}
