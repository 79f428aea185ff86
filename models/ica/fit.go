package ica

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/streamfit/streamfit/internal/stream"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/sketch"
	"github.com/streamfit/streamfit/solver"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// ErrSpectrum reports that the covariance less the noise variance has fewer
// than k positive eigenvalues: k is too large for the data.
var ErrSpectrum = errors.New("ica: covariance has fewer than k eigenvalues above the noise level")

// Fit learns k independent components from src in two passes (3+PowerIters on
// the sketched path); see the package comment for the method.
func Fit(ctx context.Context, src stream.DenseSource, cfg Config) (*Model, error) {
	start := time.Now()
	cfg.defaults()
	d := src.Info().Cols
	if d <= 0 {
		return nil, fmt.Errorf("ica: the source does not report its number of columns")
	}
	if err := cfg.check(d); err != nil {
		return nil, err
	}
	solve, err := solver.ByName(cfg.Solver)
	if err != nil {
		return nil, fmt.Errorf("ica: %w", err)
	}
	k := cfg.K
	if d <= cfg.ExactDim {
		// The exact path runs through the mergeable statistics of its
		// passes, as `streamfit stats` computes them per shard.
		return models.FitPlan(ctx, src, &Plan{Config: cfg, Path: src.Info().Path}, cfg.Workers, cfg, FitStats, start, (*Model).seconds)
	}
	sp, err := spectrum(ctx, src, d, &cfg)
	if err != nil {
		return nil, err
	}
	w, b, white, err := whitening(sp, d, k)
	if err != nil {
		return nil, err
	}
	v := contractionVector(k, cfg.Seed)
	wh := &whitened{src: src, w: w, mean: sp.mean, workers: cfg.Workers}
	t, err := wh.third(ctx, v)
	if err != nil {
		return nil, err
	}
	if wh.n != sp.n {
		return nil, fmt.Errorf("ica: the source changed between passes (%d rows, then %d)", sp.n, wh.n)
	}
	res, err := solve(ctx, t, k, solver.Options{Restarts: cfg.Restarts, Iters: cfg.Iters, Seed: cfg.Seed})
	if err != nil {
		return nil, fmt.Errorf("ica: %w (k=%d may exceed the number of non-Gaussian sources)", err, k)
	}
	theta := mat.DenseCopyOf(res.Factors)
	kurt, iters, err := wh.refine(ctx, theta, max(cfg.Refine, 0))
	if err != nil {
		return nil, err
	}
	m := buildModel(theta, kurt, b, sp, white, res, cfg)
	m.Stats.Passes = sp.passes + wh.passes
	m.Stats.RefineIters = iters
	m.Stats.Seconds = time.Since(start).Seconds()
	return m, nil
}

// whitening returns W = U (Λ − σ²)^{-1/2}, B = U (Λ − σ²)^{1/2} and the
// whitened eigenvalues of the spectrum sp.
func whitening(sp *spec, d, k int) (w, b *mat.Dense, white []float64, err error) {
	w = mat.NewDense(d, k, nil)
	b = mat.NewDense(d, k, nil)
	white = make([]float64, k)
	for j := range k {
		white[j] = sp.vals[j] - sp.sigma2
		if !(white[j] > 0) {
			return nil, nil, nil, fmt.Errorf("%w (eigenvalue %d is %.3g, noise %.3g); try a smaller k", ErrSpectrum, j+1, sp.vals[j], sp.sigma2)
		}
		s := math.Sqrt(white[j])
		for i := range d {
			w.Set(i, j, sp.u.At(i, j)/s)
			b.Set(i, j, sp.u.At(i, j)*s)
		}
	}
	return w, b, white, nil
}

// contractionVector is the random unit vector v of K(I,I,I,v), from seed.
func contractionVector(k int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0x696361))
	v := make([]float64, k)
	var vn float64
	for i := range v {
		v[i] = rng.NormFloat64()
		vn += v[i] * v[i]
	}
	for i := range v {
		v[i] /= math.Sqrt(vn)
	}
	return v
}

// buildModel maps the refined columns theta and their kurtoses back to the
// mixing matrix (Passes, RefineIters and Seconds are the caller's).
func buildModel(theta *mat.Dense, kurt []float64, b *mat.Dense, sp *spec, white []float64, res *solver.Result, cfg Config) *Model {
	d, k := b.Dims()
	m := &Model{Model: "ica", K: k, D: d, Mixing: make([][]float64, k), Kurtosis: make([]float64, k), Mean: sp.mean}
	for i := range k {
		th := mat.VecDenseCopyOf(theta.ColView(i))
		m.Kurtosis[i] = kurt[i]
		a := mat.NewVecDense(d, nil)
		a.MulVec(b, th)
		col := a.RawVector().Data
		// Fix the sign: the entry of largest magnitude is positive.
		big := 0
		for j := range col {
			if math.Abs(col[j]) > math.Abs(col[big]) {
				big = j
			}
		}
		if col[big] < 0 {
			for j := range col {
				col[j] = -col[j]
			}
		}
		m.Mixing[i] = col
	}
	m.Stats = &Stats{Rows: sp.n, Method: sp.method, Solver: cfg.Solver, Sigma2: sp.sigma2, Whitening: white, Lambda: res.Weights}
	m.Stats.Record("", res)
	return m
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

func batchMatrix(b *stream.Dense) blas64.General {
	return blas64.General{Rows: b.Rows, Cols: b.Cols, Stride: b.Cols, Data: b.Data[:b.Rows*b.Cols]}
}

type spec struct {
	n      int64
	mean   []float64
	u      *mat.Dense // d×k
	vals   []float64  // k covariance eigenvalues, decreasing
	sigma2 float64
	passes int
	method string
}

type first struct {
	n     int64
	sum   []float64
	sumSq float64
	s     *mat.SymDense // Σxxᵀ (exact path only)
}

// spectrum finds the mean, the top-k covariance eigenpairs and the noise level.
func spectrum(ctx context.Context, src stream.DenseSource, d int, cfg *Config) (*spec, error) {
	exact := d <= cfg.ExactDim
	f, err := firstPass(ctx, src, d, cfg.Workers, exact)
	if err != nil {
		return nil, err
	}
	return spectrumOf(ctx, src, f, d, cfg)
}

// spectrumOf finds the spectrum from the first pass's sums f: from its
// second moment when d ≤ ExactDim, else by sketching the covariance over
// src (which may be nil on the exact path).
func spectrumOf(ctx context.Context, src stream.DenseSource, f *first, d int, cfg *Config) (*spec, error) {
	exact := d <= cfg.ExactDim
	if f.n < 2 {
		return nil, fmt.Errorf("ica: the source has %d rows, need at least 2", f.n)
	}
	k := cfg.K
	nf := float64(f.n)
	sp := &spec{n: f.n, mean: make([]float64, d), passes: 1}
	for i, v := range f.sum {
		sp.mean[i] = v / nf
	}
	var trace float64 = f.sumSq/nf - dot(sp.mean, sp.mean)
	if exact {
		c := mat.NewSymDense(d, nil)
		for i := range d {
			for j := i; j < d; j++ {
				c.SetSym(i, j, f.s.At(i, j)/nf-sp.mean[i]*sp.mean[j])
			}
		}
		res, err := sketch.TopEigen(ctx, sketch.Dense{A: c}, d, sketch.Options{ExactDim: d})
		if err != nil {
			return nil, fmt.Errorf("ica: covariance: %w", err)
		}
		sp.u = mat.DenseCopyOf(res.Vectors.Slice(0, d, 0, k))
		sp.vals = res.Values[:k]
		sp.method = "exact"
	} else {
		op := &covOp{src: src, d: d, workers: cfg.Workers, mean: sp.mean}
		res, err := sketch.TopEigen(ctx, op, k, sketch.Options{Oversample: cfg.Oversample, PowerIters: cfg.PowerIters, Seed: cfg.Seed})
		if err != nil {
			return nil, fmt.Errorf("ica: sketching the covariance: %w", err)
		}
		sp.u, sp.vals = res.Vectors, res.Values
		sp.passes += res.Products
		sp.method = "sketch"
	}
	if k < d {
		var top float64
		for _, v := range sp.vals {
			top += v
		}
		sp.sigma2 = math.Max(0, (trace-top)/float64(d-k))
	}
	return sp, nil
}

func firstPass(ctx context.Context, src stream.DenseSource, d, workers int, second bool) (*first, error) {
	path := src.Info().Path
	fs := make([]first, workers)
	for w := range fs {
		fs[w].sum = make([]float64, d)
		if second {
			fs[w].s = mat.NewSymDense(d, nil)
		}
	}
	err := stream.Each(ctx, src.Rows, workers, func(w int, b *stream.Dense) error {
		if err := checkBatch(path, b, d); err != nil {
			return err
		}
		if b.Rows == 0 {
			return nil
		}
		f := &fs[w]
		f.n += int64(b.Rows)
		for i := range b.Rows {
			for j, v := range b.Row(i) {
				f.sum[j] += v
				f.sumSq += v * v
			}
		}
		if second {
			blas64.Syrk(blas.Trans, 1, batchMatrix(b), 1, f.s.RawSymmetric())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for w := 1; w < workers; w++ {
		fs[0].n += fs[w].n
		fs[0].sumSq += fs[w].sumSq
		for j, v := range fs[w].sum {
			fs[0].sum[j] += v
		}
		if second {
			fs[0].s.AddSym(fs[0].s, fs[w].s)
		}
	}
	return &fs[0], nil
}

// covOp is the covariance as a sketch.Operator; each product is one pass.
type covOp struct {
	src     stream.DenseSource
	d       int
	workers int
	mean    []float64
}

func (o *covOp) Dim() int { return o.d }

// MulBlock sets dst = (1/n) Σ x(xᵀω) − m(mᵀω).
func (o *covOp) MulBlock(ctx context.Context, dst, omega *mat.Dense) error {
	path := o.src.Info().Path
	_, c := omega.Dims()
	acc := make([]*mat.Dense, o.workers)
	tmp := make([][]float64, o.workers)
	ns := make([]int64, o.workers)
	for w := range acc {
		acc[w] = mat.NewDense(o.d, c, nil)
	}
	om := omega.RawMatrix()
	err := stream.Each(ctx, o.src.Rows, o.workers, func(w int, b *stream.Dense) error {
		if err := checkBatch(path, b, o.d); err != nil {
			return err
		}
		if b.Rows == 0 {
			return nil
		}
		ns[w] += int64(b.Rows)
		if cap(tmp[w]) < b.Rows*c {
			tmp[w] = make([]float64, b.Rows*c)
		}
		xo := blas64.General{Rows: b.Rows, Cols: c, Stride: c, Data: tmp[w][:b.Rows*c]}
		x := batchMatrix(b)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, x, om, 0, xo)
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, x, xo, 1, acc[w].RawMatrix())
		return nil
	})
	if err != nil {
		return err
	}
	var n int64
	for w := range acc {
		n += ns[w]
		if w > 0 {
			acc[0].Add(acc[0], acc[w])
		}
	}
	if n == 0 {
		return fmt.Errorf("ica: the source has no rows")
	}
	dst.Scale(1/float64(n), acc[0])
	mv := mat.NewVecDense(o.d, o.mean)
	var mo mat.VecDense
	mo.MulVec(omega.T(), mv)
	var outer mat.Dense
	outer.Outer(1, mv, &mo)
	dst.Sub(dst, &outer)
	return nil
}

// symOrth replaces m by m(mᵀm)^{-1/2}; false if mᵀm is singular.
func symOrth(m *mat.Dense) bool {
	k, _ := m.Dims()
	var g mat.SymDense
	g.SymOuterK(1, m.T())
	var es mat.EigenSym
	if !es.Factorize(&g, true) {
		return false
	}
	vals := es.Values(nil)
	var v mat.Dense
	es.VectorsTo(&v)
	for _, x := range vals {
		if !(x > 1e-300) {
			return false
		}
	}
	inv := mat.NewDense(k, k, nil)
	for i := range k {
		for j := range k {
			var s float64
			for l := range k {
				s += v.At(i, l) * v.At(j, l) / math.Sqrt(vals[l])
			}
			inv.Set(i, j, s)
		}
	}
	var out mat.Dense
	out.Mul(m, inv)
	m.Copy(&out)
	return true
}
