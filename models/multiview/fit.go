package multiview

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Config sets up a fit. The zero value plus K splits the columns into three
// equal views.
type Config struct {
	// K is the number of classes; it must not exceed any view's width.
	K int
	// Views lists the column indices of views 1, 2 and 3 (disjoint). Nil splits
	// the d columns into three consecutive groups of ⌊d/3⌋ (the last takes the rest).
	Views [][]int
	// RandomViews, with Views nil, assigns the columns to three views at random
	// (seeded by Seed): 004 Prop 3.2 for mixtures of product distributions, whose
	// coordinates are conditionally independent given the class.
	RandomViews bool
	// Rotate applies a uniformly random rotation R (seeded by Seed) to every
	// row before the views are cut: 004 Prop 3.3 for a spherical Gaussian
	// mixture, whose rotated coordinates stay conditionally independent and
	// whose rotated mean matrix has, almost surely, full column rank in every
	// view however the means were aligned with the axes. The view means are
	// then in rotated coordinates; when the views cover every column the fit
	// also reports the component means Rᵀ[μ₁; μ₂; μ₃] in the original ones.
	Rotate bool
	// Solver names the symmetric solver (solver.ByName; default "rtpm").
	Solver string
	// Restarts and Iters tune the solver (0 selects its defaults).
	Restarts, Iters int
	// Seed fixes every random choice.
	Seed uint64
	// Workers is the number of goroutines per pass (default 1).
	Workers int
}

// EqualViews splits d columns into three consecutive groups.
func EqualViews(d int) [][]int {
	s := d / 3
	out := make([][]int, 3)
	for t := range 3 {
		hi := (t + 1) * s
		if t == 2 {
			hi = d
		}
		for j := t * s; j < hi; j++ {
			out[t] = append(out[t], j)
		}
	}
	return out
}

// RandomViews splits d ≥ 3 columns into three views of sizes as equal as
// possible by a seeded random permutation (004 Prop 3.2); each view's columns
// are in increasing order.
func RandomViews(d int, seed uint64) [][]int {
	perm := rand.New(rand.NewPCG(seed, 0x6d76)).Perm(d)
	out := make([][]int, 3)
	for i, c := range perm {
		out[i%3] = append(out[i%3], c)
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

func checkViews(views [][]int, d int) error {
	if len(views) != 3 {
		return fmt.Errorf("multiview: %d views given, need 3", len(views))
	}
	seen := make([]bool, d)
	for t, v := range views {
		if len(v) == 0 {
			return fmt.Errorf("multiview: view %d is empty", t+1)
		}
		for _, c := range v {
			if c < 0 || c >= d {
				return fmt.Errorf("multiview: view %d names column %d, the rows have %d", t+1, c, d)
			}
			if seen[c] {
				return fmt.Errorf("multiview: column %d is in two views", c)
			}
			seen[c] = true
		}
	}
	return nil
}

// Fit learns a k-class three-view mixture from src in two passes, through
// their mergeable statistics (Plan), as `streamfit stats` computes them per
// shard.
func Fit(ctx context.Context, src stream.DenseSource, cfg Config) (*Model, error) {
	start := time.Now()
	d := src.Info().Cols
	if d <= 0 {
		return nil, fmt.Errorf("multiview: the source does not report its number of columns")
	}
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	return models.FitPlan(ctx, src, (&Plan{Config: cfg, Path: src.Info().Path}).Planner(), cfg.Workers, cfg, FitStats, start, (*Model).seconds)
}

// FitStats fits the mixture from merged pass-2 statistics of Plan; the
// settings the statistics fix are taken from them, the solver's from cfg.
func FitStats(ctx context.Context, st *implicit.DenseStats, cfg Config) (*Model, error) {
	cfg, err := ConfigFromStats(cfg, st.Header)
	if err != nil {
		return nil, err
	}
	tp, err := (&Plan{Config: cfg}).triplePlan(st.Header.D)
	if err != nil {
		return nil, err
	}
	dec, err := tp.DecomposeStats(ctx, st, Options{K: cfg.K, Solver: cfg.Solver, Restarts: cfg.Restarts, Iters: cfg.Iters, Seed: cfg.Seed, Workers: cfg.Workers})
	if err != nil {
		return nil, err
	}
	d, k := st.Header.D, len(dec.Weights)
	views := cfg.Views
	m := &Model{Model: "multiview", K: k, D: d, Views: views, Weights: dec.Weights, Means: make([][][]float64, 3)}
	for t := range 3 {
		m.Means[t] = rowsOf(dec.Means[t])
	}
	solverName := cfg.Solver
	if solverName == "" {
		solverName = "rtpm"
	}
	if cfg.Rotate {
		m.Rotated = true
		m.Components = components(m, Rotation(d, cfg.Seed))
	}
	ms := &FitRecord{Rows: dec.N, Passes: 2, Solver: solverName, Whitening: dec.Whitening, Lambda: dec.Lambda, WeightSum: floats.Sum(dec.Weights)}
	ms.Record("", dec.Result)
	if k < cfg.K {
		ms.Warnings = append(ms.Warnings, fmt.Sprintf("the cross moments of the views support %d of the k=%d components (views of %d, %d and %d columns): the model has %d", k, cfg.K, len(views[0]), len(views[1]), len(views[2]), k))
	}
	floats.Scale(1/ms.WeightSum, m.Weights)
	m.Fit = ms
	return m, nil
}

// views returns the column groups of the three views for rows of d
// columns.
func (cfg Config) views(d int) ([][]int, error) {
	views := cfg.Views
	if views == nil {
		if d < 3 {
			return nil, fmt.Errorf("multiview: d=%d columns cannot make three views", d)
		}
		if cfg.RandomViews {
			views = RandomViews(d, cfg.Seed)
		} else {
			views = EqualViews(d)
		}
	}
	if err := checkViews(views, d); err != nil {
		return nil, err
	}
	return views, nil
}

// viewCutter cuts batches of rows (rotated by rot when it is set) into the
// three views, with one worker's scratch.
type viewCutter struct {
	path    string
	d       int
	views   [][]int
	rot     *mat.Dense
	scratch [3][]float64
	rotated []float64
}

func newViewCutter(path string, d int, views [][]int, rot *mat.Dense) *viewCutter {
	return &viewCutter{path: path, d: d, views: views, rot: rot}
}

// cut checks the batch b and returns its three views (valid until the next
// call).
func (v *viewCutter) cut(b *stream.Dense) ([3]blas64.General, error) {
	var xs [3]blas64.General
	d := v.d
	if err := models.CheckRows(v.path, b, d); err != nil || b.Rows == 0 {
		return xs, err
	}
	rows := b.Data[:b.Rows*d]
	if v.rot != nil {
		// Row i of the batch becomes (R x_i)ᵀ = x_iᵀ Rᵀ.
		if cap(v.rotated) < b.Rows*d {
			v.rotated = make([]float64, b.Rows*d)
		}
		rows = v.rotated[:b.Rows*d]
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, blas64.General{Rows: b.Rows, Cols: d, Stride: d, Data: b.Data[:b.Rows*d]},
			v.rot.RawMatrix(), 0, blas64.General{Rows: b.Rows, Cols: d, Stride: d, Data: rows})
	}
	for t := range 3 {
		dt := len(v.views[t])
		if cap(v.scratch[t]) < b.Rows*dt {
			v.scratch[t] = make([]float64, b.Rows*dt)
		}
		buf := v.scratch[t][:b.Rows*dt]
		for i := range b.Rows {
			row := rows[i*d : (i+1)*d]
			for j, c := range v.views[t] {
				buf[i*dt+j] = row[c]
			}
		}
		xs[t] = blas64.General{Rows: b.Rows, Cols: dt, Stride: dt, Data: buf}
	}
	return xs, nil
}

// Rotation returns a uniformly distributed d×d rotation (Haar measure on the
// orthogonal matrices): the Q of a Gaussian matrix's QR factorisation with
// the signs of R's diagonal moved into Q.
func Rotation(d int, seed uint64) *mat.Dense {
	r := rand.New(rand.NewPCG(seed, 0x726f74))
	g := mat.NewDense(d, d, nil)
	for i := range d {
		for j := range d {
			g.Set(i, j, r.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q, rr mat.Dense
	qr.QTo(&q)
	qr.RTo(&rr)
	for j := range d {
		if rr.At(j, j) < 0 {
			for i := range d {
				q.Set(i, j, -q.At(i, j))
			}
		}
	}
	return &q
}

// components maps the view means back to the original coordinates when the
// views cover every column: μ = Rᵀ[μ₁; μ₂; μ₃] (nil otherwise).
func components(m *Model, rot *mat.Dense) [][]float64 {
	d := m.D
	n := 0
	for _, v := range m.Views {
		n += len(v)
	}
	if n != d {
		return nil
	}
	out := make([][]float64, m.K)
	y := mat.NewVecDense(d, nil)
	for i := range m.K {
		for t, cols := range m.Views {
			for j, c := range cols {
				y.SetVec(c, m.Means[t][i][j])
			}
		}
		var x mat.VecDense
		x.MulVec(rot.T(), y)
		out[i] = append([]float64(nil), x.RawVector().Data...)
	}
	return out
}

// rowsOf returns the columns of a as slices.
func rowsOf(a *mat.Dense) [][]float64 {
	_, c := a.Dims()
	out := make([][]float64, c)
	for i := range c {
		out[i] = mat.Col(nil, i, a)
	}
	return out
}
