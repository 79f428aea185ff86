package gmm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// ErrSpectrum reports that the corrected second moment has fewer than k
// positive eigenvalues: k is too large for the data, or the sample too small.
var ErrSpectrum = errors.New("gmm: M2 = E[xxᵀ] − σ²I has fewer than k positive eigenvalues")

// spectrum is what the second-moment stage hands to the third-moment pass.
type spectrum struct {
	n      int64
	mean   []float64
	sigma2 float64
	u      *mat.Dense // d×k top eigenvectors of E[xxᵀ]
	vals   []float64  // their eigenvalues
	qc     *mat.Dense // d×(k−1) top eigenvectors of the covariance
	passes int
	method string
}

// Fit learns a k-component spherical Gaussian mixture from src. It makes two
// passes on the exact path (d ≤ cfg.ExactDim) and 3+PowerIters passes on the
// sketched path, and keeps O(d·(k+Oversample) + k³) numbers (O(d²) when
// exact): the passes of Plan, each over all the rows, and FitStats.
//
// With cfg.EM set, the EM passes follow (see Config.EM and FitEM).
func Fit(ctx context.Context, src stream.DenseSource, cfg Config) (*Model, error) {
	if cfg.EM != nil {
		return fitEM(ctx, src, cfg)
	}
	start := time.Now()
	cfg.defaults()
	d := src.Info().Cols
	if d <= 0 {
		return nil, fmt.Errorf("gmm: the source does not report its number of columns")
	}
	if err := cfg.check(d); err != nil {
		return nil, err
	}
	if _, err := solver.ByName(cfg.Solver); err != nil {
		return nil, fmt.Errorf("gmm: %w", err)
	}
	// Both paths run through the mergeable statistics of their passes, as
	// `streamfit stats` computes them per shard.
	return models.FitPlan(ctx, src, &Plan{Config: cfg, Path: src.Info().Path}, cfg.Workers, cfg, FitStats, start, (*Model).seconds)
}

// whitening returns W = U (Λ − σ²)^{-1/2}, B = (Wᵀ)⁺ = U (Λ − σ²)^{1/2} and
// the whitened eigenvalues Λ − σ² of the spectrum sp.
func whitening(sp *spectrum, d, k int) (w, b *mat.Dense, white []float64, err error) {
	white = make([]float64, k)
	w = mat.NewDense(d, k, nil)
	b = mat.NewDense(d, k, nil)
	for j := range k {
		white[j] = sp.vals[j] - sp.sigma2
		if !(white[j] > 0) {
			return nil, nil, nil, &models.ShortError{Positive: j, Err: fmt.Errorf("%w (eigenvalue %d is %.3g after removing σ²=%.3g); try a smaller k", ErrSpectrum, j+1, white[j], sp.sigma2)}
		}
		s := math.Sqrt(white[j])
		for i := range d {
			w.Set(i, j, sp.u.At(i, j)/s)
			b.Set(i, j, sp.u.At(i, j)*s)
		}
	}
	return w, b, white, nil
}

// recoverModel decomposes the corrected whitened third moment of the sums
// tm and maps the factors back to the mixture's parameters.
func recoverModel(ctx context.Context, sp *spectrum, tm *thirdMoments, w, b *mat.Dense, white []float64, cfg Config) (*Model, error) {
	d, k := w.Dims()
	solve, err := solver.ByName(cfg.Solver)
	if err != nil {
		return nil, fmt.Errorf("gmm: %w", err)
	}
	if tm.n != sp.n {
		return nil, fmt.Errorf("gmm: the source changed between passes (%d rows, then %d)", sp.n, tm.n)
	}
	t, a := correctedThird(tm, w, white, sp, cfg.Differing)
	res, err := solve(ctx, t, k, solver.Options{Restarts: cfg.Restarts, Iters: cfg.Iters, Seed: cfg.Seed})
	if err != nil {
		return nil, &models.ShortError{Positive: k - 1, Err: fmt.Errorf("gmm: %w (k=%d may be too large for the data)", err, k)}
	}
	m := &Model{Model: "gmm", K: k, D: d, Weights: make([]float64, k), Means: make([][]float64, k), Variances: make([]float64, k)}
	st := &FitRecord{Rows: sp.n, Passes: sp.passes + 1, Method: sp.method, Solver: cfg.Solver, Differing: cfg.Differing, Sigma2: sp.sigma2, Whitening: white, Lambda: make([]float64, k)}
	st.Record("", res)
	coef := mat.NewDense(k, k, nil) // columns wᵢWᵀμᵢ = vᵢ/λᵢ
	for i, lam := range res.Weights {
		st.Lambda[i] = lam
		m.Weights[i] = 1 / (lam * lam)
		v := res.Factors.ColView(i)
		mu := mat.NewVecDense(d, nil)
		mu.MulVec(b, v)
		mu.ScaleVec(lam, mu)
		m.Means[i] = mu.RawVector().Data
		for j := range k {
			coef.Set(j, i, v.AtVec(j)/lam)
		}
	}
	if cfg.Differing {
		var s mat.VecDense
		if err := s.SolveVec(coef, mat.NewVecDense(k, a)); err != nil {
			return nil, &models.ShortError{Positive: k - 1, Err: fmt.Errorf("gmm: recovering the variances: %w", err)}
		}
		for i := range k {
			m.Variances[i] = s.AtVec(i)
		}
	} else {
		for i := range k {
			m.Variances[i] = sp.sigma2
		}
	}
	st.WeightSum = floats.Sum(m.Weights)
	floats.Scale(1/st.WeightSum, m.Weights)
	m.Fit = st
	return m, nil
}

// correctedThird turns the second pass's sums into the whitened, noise
// corrected M3 of docs/MATH.md §3.6, T̃ = E[z^⊗3] − Sym3(WᵀM1, WᵀW) with z = Wᵀx,
// and returns it with a = WᵀM1. M1 = σ²E[x] (common variance) or
// E[x‖P⊥(x−m)‖²]/(d−k+1) (004 Thm 3.3, averaged over an orthonormal basis of
// the noise subspace). W = U diag(white)^{-1/2} with orthonormal U, so WᵀW =
// diag(1/white) and only entries with a repeated index are corrected.
func correctedThird(tm *thirdMoments, w *mat.Dense, white []float64, sp *spectrum, differing bool) (*solver.Sym3, []float64) {
	d, k := w.Dims()
	nf := float64(tm.n)
	t := tm.t
	t.Scale(1 / nf)
	m1 := make([]float64, d)
	if differing {
		floats.ScaleTo(m1, 1/(nf*float64(d-k+1)), tm.m1)
	} else {
		floats.ScaleTo(m1, sp.sigma2, sp.mean)
	}
	a := make([]float64, k)
	for j := range k {
		for i := range d {
			a[j] += w.At(i, j) * m1[i]
		}
	}
	for i := range k {
		for l := range k {
			c := a[l] / white[i]
			if i == l {
				c *= 3
			}
			t.Add(i, i, l, -c)
		}
	}
	return t, a
}

// exactSpectrum is the spectrum of the exact path from the first moments
// fm and the second-moment sums s (Σxxᵀ, scaled here).
func exactSpectrum(fm *firstMoments, s *mat.SymDense, d int, cfg *Config) (*spectrum, error) {
	if fm.n == 0 {
		return nil, fmt.Errorf("gmm: the source has no rows")
	}
	s.ScaleSym(1/float64(fm.n), s)
	var es mat.EigenSym
	if !es.Factorize(s, true) {
		return nil, errors.New("gmm: eigendecomposition of the second moment did not converge")
	}
	uAll, vAll := sortedEigen(&es)
	return finishSpectrum(&spectrum{passes: 1, method: "exact"}, fm, uAll, vAll, d, cfg)
}

// finishSpectrum completes sp from the first moments and the eigenpairs
// uAll, vAll of E[xxᵀ] (all of them, or the sketch's): the mean, σ², the
// top k, and the covariance's top k−1 eigenvectors.
func finishSpectrum(sp *spectrum, fm *firstMoments, uAll *mat.Dense, vAll []float64, d int, cfg *Config) (*spectrum, error) {
	k := cfg.K
	nf := float64(fm.n)
	sp.n = fm.n
	sp.mean = make([]float64, d)
	floats.ScaleTo(sp.mean, 1/nf, fm.sum)
	_, r := uAll.Dims()
	// Covariance restricted to span(U): diag(vals) − (Uᵀm)(Uᵀm)ᵀ. Its top k−1
	// eigenvectors span the μᵢ − μ̄ (docs/MATH.md §2.2).
	um := make([]float64, r)
	for j := range r {
		for i := range d {
			um[j] += uAll.At(i, j) * sp.mean[i]
		}
	}
	c := mat.NewSymDense(r, nil)
	for i := range r {
		for j := i; j < r; j++ {
			v := -um[i] * um[j]
			if i == j {
				v += vAll[i]
			}
			c.SetSym(i, j, v)
		}
	}
	var ec mat.EigenSym
	if !ec.Factorize(c, true) {
		return nil, errors.New("gmm: eigendecomposition of the covariance did not converge")
	}
	gc, nu := sortedEigen(&ec)
	traceCov := fm.sumSq/nf - floats.Dot(sp.mean, sp.mean)
	switch {
	case cfg.Sigma2 > 0:
		sp.sigma2 = cfg.Sigma2
	case cfg.SigmaMin && r == d:
		sp.sigma2 = math.Max(nu[d-1], 0)
	default:
		// The d−k+1 smallest covariance eigenvalues all equal σ² in the
		// population; their mean is the trace minus the top k−1.
		top := floats.Sum(nu[:k-1])
		sp.sigma2 = math.Max((traceCov-top)/float64(d-k+1), 0)
	}
	sp.u = mat.DenseCopyOf(uAll.Slice(0, d, 0, k))
	sp.vals = vAll[:k]
	if k > 1 {
		sp.qc = mat.NewDense(d, k-1, nil)
		sp.qc.Mul(uAll, gc.Slice(0, r, 0, k-1))
	}
	return sp, nil
}

// sortedEigen returns the eigenvectors and eigenvalues in decreasing order.
func sortedEigen(es *mat.EigenSym) (*mat.Dense, []float64) {
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	n := len(vals)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return vals[idx[a]] > vals[idx[b]] })
	out := mat.NewDense(n, n, nil)
	sv := make([]float64, n)
	for j, i := range idx {
		sv[j] = vals[i]
		for r := range n {
			out.Set(r, j, vecs.At(r, i))
		}
	}
	return out, sv
}
