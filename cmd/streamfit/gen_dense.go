package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

// truthWriter is what the dense generators have in common besides their
// rows: writing their truth file.
type truthWriter interface{ WriteTruth(path string) error }

// runGenDense writes a dense sample table (Parquet or Arrow) from a GMM or a
// snapshot model, with its truth file.
func runGenDense(ctx context.Context, model string, args []string) error {
	fs := newFlags("gen "+model, "", "Draws a dense sample table and writes it as Parquet or Arrow (by the name of --out: column x = fixed_size_list<float64>, plus an int64 group column for snapshots), with the model in a JSON truth file.")
	out := fs.String("out", "", "output table (.parquet, .arrow, .arrows)")
	truth := fs.String("truth", "", "output truth file (JSON)")
	seed := fs.Uint64("seed", 1, "random seed")
	k := fs.Int("k", 5, "components, sources or states")
	// Each model registers only the flags it reads (the rest keep their
	// defaults, unused).
	in := func(models ...string) bool { return slices.Contains(models, model) }
	rows, d, sigma2, differing := new(int64(100000)), new(20), new(0.0), new(false)
	sets, perSet, m, alpha0, r, pFlag := new(int64(1000)), new(1000), new(0), new(1.0), new(0.3), new("stay")
	seqs, length, discrete, dims := new(int64(20000)), new(10), new(false), new("4,4,4")
	if in("gmm", "ica", "multiview") {
		fs.Int64Var(rows, "rows", *rows, "number of samples")
	}
	if in("gmm", "ica", "hmm") {
		fs.IntVar(d, "d", *d, "dimension (hmm: of the observations)")
	}
	if in("gmm", "snapshots", "hmm", "multiview") {
		fs.Float64Var(sigma2, "sigma2", 0, "noise variance (0: the model's default, gmm 1, snapshots 2)")
	}
	switch model {
	case "gmm":
		fs.BoolVar(differing, "differing", false, "a variance per component")
	case "snapshots":
		fs.Int64Var(sets, "sets", *sets, "number of sets N")
		fs.IntVar(perSet, "per-set", *perSet, "points per set n")
		fs.IntVar(m, "m", 0, "observation dimension of the HMM (0: the chain itself, one-hot rows)")
		fs.Float64Var(alpha0, "alpha0", *alpha0, "α₀")
		fs.Float64Var(r, "r", *r, "snapshot rate r")
		fs.StringVar(pFlag, "p", *pFlag, `the transition matrix: a family, "stay" (βI + (1−β)Q, slowly mixing) or "flip" (states 0 and 1 swap, an eigenvalue near −0.6: a pole in the r scan; k ≥ 3), or a column-stochastic k×k matrix as JSON rows (P[i][j] = Pr(i | j)), inline or in a file`)
	case "hmm":
		fs.Int64Var(seqs, "seqs", *seqs, "number of sequences")
		fs.IntVar(length, "len", *length, "steps per sequence")
		fs.BoolVar(discrete, "discrete", false, "one-hot observation symbols instead of Gaussian vectors")
	case "multiview":
		fs.StringVar(dims, "dims", *dims, "widths of the three views")
	}
	rowGroup := fs.Int("row-group", 0, "rows per Parquet row group / Arrow record batch (default: by size, see stream.WriteOptions)")
	prog := addProgressFlag(fs)
	if pos, err := parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	if *out == "" {
		return usagef("--out is required")
	}
	var src stream.DenseSource
	var tr truthWriter
	switch model {
	case "gmm":
		g, err := synth.NewGMM(synth.GMMConfig{Rows: *rows, D: *d, K: *k, Sigma2: *sigma2, Differing: *differing, Seed: *seed, Workers: runtime.GOMAXPROCS(0)})
		if err != nil {
			return usageError{err.Error()}
		}
		src, tr = g, g
	case "snapshots":
		family, pm, err := parseP(*pFlag)
		if err != nil {
			return err
		}
		g, err := synth.NewSnapshots(synth.SnapshotConfig{Sets: *sets, PerSet: *perSet, K: *k, M: *m, Sigma2: *sigma2, Alpha0: *alpha0, R: *r,
			P: pm, Family: family, Seed: *seed, Workers: runtime.GOMAXPROCS(0)})
		if err != nil {
			return usageError{err.Error()}
		}
		src, tr = g, g
	case "ica":
		g, err := synth.NewICA(synth.ICAConfig{Rows: *rows, D: *d, K: *k, Seed: *seed})
		if err != nil {
			return usageError{err.Error()}
		}
		src, tr = g, g
	case "hmm":
		g, err := synth.NewHMMSeq(synth.HMMSeqConfig{Seqs: *seqs, Len: *length, K: *k, D: *d, Discrete: *discrete, Sigma2: *sigma2, Seed: *seed})
		if err != nil {
			return usageError{err.Error()}
		}
		src, tr = g, g
	case "multiview":
		var dd [3]int
		if _, err := fmt.Sscanf(*dims, "%d,%d,%d", &dd[0], &dd[1], &dd[2]); err != nil {
			return usagef("--dims: want three widths like 4,5,6")
		}
		g, err := synth.NewMultiView(synth.MultiViewConfig{Rows: *rows, Dims: dd, K: *k, Sigma2: *sigma2, Seed: *seed})
		if err != nil {
			return usageError{err.Error()}
		}
		src, tr = g, g
	}
	if *rowGroup < 0 {
		return usagef("--row-group=%d must not be negative", *rowGroup)
	}
	if err := checkOutputFormat(*out, ""); err != nil {
		return err
	}
	if err := checkOutputs(nil, *out, *truth); err != nil {
		return err
	}
	w, err := stream.CreateDense(*out, stream.WriteOptions{RowGroupRows: *rowGroup})
	if err != nil {
		return err
	}
	p, done := startProgress(*prog, "gen", 0)
	defer done()
	for b, err := range src.Rows(ctx) {
		if err == nil {
			p.Add(int64(b.Rows), 0)
			err = w.Write(b)
		}
		if err != nil {
			w.Abort()
			return err
		}
		b.Release()
	}
	if err := w.Close(); err != nil {
		return err
	}
	if *truth != "" {
		if err := tr.WriteTruth(*truth); err != nil {
			os.Remove(*out)
			return err
		}
	}
	return nil
}

// parseP reads --p: a chain family name, or a matrix as JSON rows given
// inline ("[[...],...]") or in a file.
func parseP(s string) (family string, p [][]float64, err error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "stay" || s == "flip":
		return s, nil, nil
	case strings.HasPrefix(s, "["):
		if err := json.Unmarshal([]byte(s), &p); err != nil {
			return "", nil, usagef("--p: not a JSON matrix: %v", err)
		}
		return "", p, nil
	}
	b, err := os.ReadFile(s)
	if err != nil {
		return "", nil, usagef("--p=%q: not a family (stay, flip), an inline JSON matrix, or a readable file: %v", s, err)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return "", nil, fmt.Errorf("%s: not a JSON matrix: %w", s, err)
	}
	return "", p, nil
}
