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

// ErrSpectrum reports that the covariance has no direction above the noise
// level: the rows are constant, and there is no source to find.
var ErrSpectrum = errors.New("ica: covariance has no eigenvalue above the noise level")

// spectrumTol is the least whitened eigenvalue, relative to the largest
// eigenvalue, that counts as a direction of the data: covariances formed
// from sums lose about 10⁻¹⁶ of their scale to rounding, so a direction of
// a rank-deficient covariance (constant pixels, patches less their mean)
// comes out near 10⁻¹⁷ rather than 0, and whitening by it would amplify
// rounding into a component.
const spectrumTol = 1e-10

// supported cuts sp to the k' ≤ k leading eigenpairs whose eigenvalue
// exceeds the noise level (re-estimated for k'), the most sources the
// data support, and returns k'; 0 when none does. sumSq is Σ‖x‖².
func (sp *spec) supported(sumSq float64, d, k int) int {
	vals, u := sp.vals, sp.u
	for c := k; c >= 1; c-- {
		sp.vals, sp.sigma2 = vals[:c], 0
		noise(sp, sumSq, d, c)
		if vals[c-1]-sp.sigma2 > spectrumTol*vals[0] {
			sp.u = u.Slice(0, d, 0, c).(*mat.Dense)
			return c
		}
	}
	return 0
}

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
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if _, err := solver.ByName(cfg.Solver); err != nil {
		return nil, fmt.Errorf("ica: %w", err)
	}
	// Both paths run through the mergeable statistics of their passes, as
	// `streamfit stats` computes them per shard.
	plan := &Plan{Config: cfg, Path: src.Info().Path}
	return models.FitPlan(ctx, src, plan, cfg.Workers, cfg, plan.fitStats, start, (*Model).seconds)
}

// whitening returns W = U (Λ − σ²)^{-1/2}, B = U (Λ − σ²)^{1/2} and the
// whitened eigenvalues of the spectrum sp, cut by supported to k
// eigenvalues above the noise.
func whitening(sp *spec, d, k int) (w, b *mat.Dense, white []float64) {
	w = mat.NewDense(d, k, nil)
	b = mat.NewDense(d, k, nil)
	white = make([]float64, k)
	for j := range k {
		white[j] = sp.vals[j] - sp.sigma2
		s := math.Sqrt(white[j])
		for i := range d {
			w.Set(i, j, sp.u.At(i, j)/s)
			b.Set(i, j, sp.u.At(i, j)*s)
		}
	}
	return w, b, white
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
	if w := fewerWarning(cfg.asked, k, d); w != "" {
		m.Fit.Warnings = append(m.Fit.Warnings, w)
	}
	return m
}

// fewerWarning says why a fit asked for asked sources found k over rows
// of d columns ("" when asked is 0, k was not lowered).
func fewerWarning(asked, k, d int) string {
	switch {
	case asked <= k:
		return ""
	case asked > d && k == d:
		return fmt.Sprintf("k=%d exceeds the dimension d=%d: %d mixtures separate at most %d sources, so the model has %d components", asked, d, d, d, k)
	case asked > d:
		return fmt.Sprintf("k=%d exceeds the dimension d=%d, and the covariance has only %d directions above the noise level: the model has %d components", asked, d, k, k)
	}
	return fmt.Sprintf("the covariance has only %d directions above the noise level, fewer than k=%d: the model has %d components (k=%d gives the same)", k, asked, k, k)
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
	k = min(k, d)
	sp.u = mat.DenseCopyOf(res.Vectors.Slice(0, d, 0, k))
	sp.vals = res.Values[:k]
	sp.method = "exact"
	noise(sp, f.sumSq, d, k)
	return sp, nil
}

// completeColumns returns k orthonormal columns (k×k) whose first are
// those of q (k×c, orthonormal; nil for none), the others spanning their
// complement: from the QR factorisation of [q | G] for a k×(k−c) matrix G
// of normal draws from seed.
func completeColumns(q *mat.Dense, k int, seed uint64) *mat.Dense {
	c := 0
	if q != nil {
		_, c = q.Dims()
	}
	out := mat.NewDense(k, k, nil)
	if c > 0 {
		out.Slice(0, k, 0, c).(*mat.Dense).Copy(q)
	}
	rng := rand.New(rand.NewPCG(seed, 0x636f6d70))
	for j := c; j < k; j++ {
		for i := range k {
			out.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(out)
	var full mat.Dense
	qr.QTo(&full)
	// Keep q's columns as they are (QR may flip their signs).
	out.Slice(0, k, c, k).(*mat.Dense).Copy(full.Slice(0, k, c, k))
	return out
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
