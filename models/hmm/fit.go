package hmm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/multiview"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// ErrShort reports a sequence with fewer than three steps.
var ErrShort = errors.New("hmm: sequence shorter than 3 steps")

// Config sets up a fit. The zero value plus K uses the first three steps of
// every sequence and projects T and π onto the simplex.
type Config struct {
	// K is the number of hidden states; the method needs 1 ≤ K ≤ d.
	K int
	// Windows uses every window of three consecutive steps instead of only
	// the first three of each sequence: far more triples per sequence, valid
	// for O and T whenever the chain is time-homogeneous; π then estimates the
	// time-averaged state distribution of the window starts (exactly the
	// initial one when the chain starts stationary).
	Windows bool
	// Discrete projects the columns of O onto the simplex too (one-hot data).
	Discrete bool
	// NoProject keeps the raw estimates of T and π (no simplex projection).
	NoProject bool
	// Solver names the symmetric solver (solver.ByName; default "rtpm").
	Solver string
	// Restarts and Iters tune the solver (0 selects its defaults).
	Restarts, Iters int
	// Seed fixes every random choice.
	Seed uint64
}

// blockTriples is the number of triples handed to the accumulators at once.
const blockTriples = 1024

// Fit learns a k-state HMM from sequences in src (two ordered passes).
func Fit(ctx context.Context, src stream.DenseSource, cfg Config) (*Model, error) {
	start := time.Now()
	info := src.Info()
	d := info.Cols
	if d <= 0 {
		return nil, fmt.Errorf("hmm: the source does not report its number of columns")
	}
	if cfg.K < 1 || cfg.K > d {
		return nil, fmt.Errorf("hmm: k=%d must be in [1, d=%d]; the moment method needs k ≤ d", cfg.K, d)
	}
	k := cfg.K
	var rows, seqs int64
	pass := func(ctx context.Context, _ int, fn func(int, blas64.General, blas64.General, blas64.General) error) error {
		r, s, err := triples(ctx, src, d, cfg.Windows, fn)
		rows, seqs = r, s
		return err
	}
	dec, err := multiview.Decompose(ctx, pass, [3]int{d, d, d}, multiview.Options{K: k, Solver: cfg.Solver, Restarts: cfg.Restarts, Iters: cfg.Iters, Seed: cfg.Seed, Workers: 1})
	if err != nil {
		return nil, fmt.Errorf("hmm: %w", err)
	}
	o, ot := dec.Means[1], dec.Means[2]
	var t mat.Dense
	if err := t.Solve(o, ot); err != nil { // least squares: O⁺(OT)
		return nil, fmt.Errorf("hmm: recovering T: %w", err)
	}
	var pi mat.VecDense
	if err := pi.SolveVec(&t, mat.NewVecDense(k, append([]float64(nil), dec.Weights...))); err != nil {
		return nil, fmt.Errorf("hmm: recovering π (T is singular): %w", err)
	}
	m := &Model{Model: "hmm", K: k, D: d, O: make([][]float64, k), T: make([][]float64, k), Pi: pi.RawVector().Data}
	st := &Stats{Rows: rows, Sequences: seqs, Triples: dec.N, Passes: 2, Solver: cfg.Solver, Whitening: dec.Whitening, Lambda: dec.Lambda, W: dec.Weights}
	st.Record("", dec.Result)
	if st.Solver == "" {
		st.Solver = "rtpm"
	}
	for j := range k {
		m.O[j] = mat.Col(nil, j, o)
		m.T[j] = make([]float64, k)
	}
	if !cfg.NoProject {
		for j := range k {
			col := mat.Col(nil, j, &t)
			st.Projected += models.ProjectSimplex(col)
			t.SetCol(j, col)
			if cfg.Discrete {
				st.Projected += models.ProjectSimplex(m.O[j])
			}
		}
		st.Projected += models.ProjectSimplex(m.Pi)
	}
	for i := range k {
		for j := range k {
			m.T[i][j] = t.At(i, j)
		}
	}
	st.Seconds = time.Since(start).Seconds()
	m.Stats = st
	return m, nil
}

// triples reads src in order and hands fn blocks of (x₁, x₂, x₃): the first
// three steps of each sequence, or every window of three with windows. It
// returns the numbers of rows and sequences.
func triples(ctx context.Context, src stream.DenseSource, d int, windows bool, fn func(int, blas64.General, blas64.General, blas64.General) error) (int64, int64, error) {
	path := src.Info().Path
	var bufs [3][]float64
	for t := range bufs {
		bufs[t] = make([]float64, blockTriples*d)
	}
	nb := 0
	flush := func() error {
		if nb == 0 {
			return nil
		}
		var xs [3]blas64.General
		for t := range xs {
			xs[t] = blas64.General{Rows: nb, Cols: d, Stride: d, Data: bufs[t][:nb*d]}
		}
		nb = 0
		return fn(0, xs[0], xs[1], xs[2])
	}
	prev := [2][]float64{make([]float64, d), make([]float64, d)}
	var (
		rows, seqs int64
		cur        int64
		pos        int   // steps seen in the current sequence
		first      int64 // row where it started
	)
	endSeq := func() error {
		if seqs > 0 && pos < 3 {
			return stream.Errorf(path, 0, first, "", ErrShort, "sequence %d has %d rows", cur, pos)
		}
		return nil
	}
	for b, err := range src.Rows(ctx) {
		if err != nil {
			return rows, seqs, err
		}
		if err := checkBatch(path, b, d); err != nil {
			b.Release()
			return rows, seqs, err
		}
		if b.Rows > 0 && len(b.Group) != b.Rows {
			b.Release()
			return rows, seqs, stream.Errorf(path, 0, b.Start, "", stream.ErrSchema, "no sequence id column: the HMM needs one id per row")
		}
		for i := range b.Rows {
			id := b.Group[i]
			if seqs > 0 && id < cur {
				b.Release()
				return rows, seqs, stream.Errorf(path, 0, b.Start+int64(i), "", stream.ErrOrder, "sequence id %d follows sequence id %d: the rows of a sequence must be contiguous and in time order, with ids increasing (sort the rows by sequence id, then time)", id, cur)
			}
			if seqs == 0 || id != cur {
				if err := endSeq(); err != nil {
					b.Release()
					return rows, seqs, err
				}
				seqs++
				cur, pos, first = id, 0, b.Start+int64(i)
			}
			x := b.Row(i)
			if pos >= 2 && (windows || pos == 2) {
				copy(bufs[0][nb*d:], prev[0])
				copy(bufs[1][nb*d:], prev[1])
				copy(bufs[2][nb*d:], x)
				nb++
				if nb == blockTriples {
					if err := flush(); err != nil {
						b.Release()
						return rows, seqs, err
					}
				}
			}
			if pos < 2 || windows {
				prev[0], prev[1] = prev[1], prev[0]
				copy(prev[1], x)
			}
			pos++
			rows++
		}
		b.Release()
	}
	if err := endSeq(); err != nil {
		return rows, seqs, err
	}
	return rows, seqs, flush()
}

// checkBatch rejects a batch whose width is not d or that holds NaN or ±Inf,
// naming the row.
func checkBatch(path string, b *stream.Dense, d int) error {
	if b.Cols != d {
		return stream.Errorf(path, 0, b.Start, "", stream.ErrValue, "rows have %d columns, expected d=%d", b.Cols, d)
	}
	for i, v := range b.Data[:b.Rows*b.Cols] {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return stream.Errorf(path, 0, b.Start+int64(i/d), "", stream.ErrValue, "value %v in column %d", v, i%d)
		}
	}
	return nil
}
