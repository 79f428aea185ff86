package ica

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/sketch"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// ErrSpectrum reports that the covariance less the noise variance has fewer
// than k positive eigenvalues: k is too large for the data.
var ErrSpectrum = errors.New("ica: covariance has fewer than k eigenvalues above the noise level")

// Fit learns k independent components from src: the passes of Plan, each
// over all the rows (two plus the polishing steps, and 1+PowerIters more on
// the sketched path), then FitStats; see the package comment for the
// method.
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
	if _, err := solver.ByName(cfg.Solver); err != nil {
		return nil, fmt.Errorf("ica: %w", err)
	}
	// Both paths run through the mergeable statistics of their passes, as
	// `streamfit stats` computes them per shard.
	return models.FitPlan(ctx, src, &Plan{Config: cfg, Path: src.Info().Path}, cfg.Workers, cfg, FitStats, start, (*Model).seconds)
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
	m.Fit = &FitRecord{Rows: sp.n, Method: sp.method, Solver: cfg.Solver, Contrast: cfg.Contrast, Sigma2: sp.sigma2, Whitening: white, Lambda: res.Weights}
	m.Fit.Record("", res)
	return m
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

// newSpec starts the spectrum of the first-pass totals f (at least two
// rows): the rows and the mean.
func newSpec(f *first, d int) *spec {
	sp := &spec{n: f.n, mean: make([]float64, d), passes: 1}
	for i, v := range f.sum {
		sp.mean[i] = v / float64(f.n)
	}
	return sp
}

// noise sets the noise level of sp from its top-k covariance eigenvalues
// and Σ‖x‖²: the mean of the d−k others (0 when k = d).
func noise(sp *spec, sumSq float64, d, k int) {
	if k < d {
		trace := sumSq/float64(sp.n) - dot(sp.mean, sp.mean)
		var top float64
		for _, v := range sp.vals {
			top += v
		}
		sp.sigma2 = math.Max(0, (trace-top)/float64(d-k))
	}
}

// exactSpectrum finds the mean, the top-k covariance eigenpairs and the
// noise level from the first pass's totals f, with its second moment.
func exactSpectrum(ctx context.Context, f *first, d int, cfg *Config) (*spec, error) {
	if f.n < 2 {
		return nil, fmt.Errorf("ica: the source has %d rows, need at least 2", f.n)
	}
	k := cfg.K
	nf := float64(f.n)
	sp := newSpec(f, d)
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
	noise(sp, f.sumSq, d, k)
	return sp, nil
}

// symOrth replaces m by m(mᵀm)^{-1/2}; false if mᵀm is singular.
func symOrth(m *mat.Dense) bool {
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
	// (mᵀm)^{-1/2} = V diag(λ^{-1/2}) Vᵀ.
	var vs, inv, out mat.Dense
	vs.Apply(func(_, j int, x float64) float64 { return x / math.Sqrt(vals[j]) }, &v)
	inv.Mul(&vs, v.T())
	out.Mul(m, &inv)
	m.Copy(&out)
	return true
}
