package lda

import (
	"math"
	"sort"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/solver"
	"gonum.org/v1/gonum/mat"
)

// recoverTopics maps the tensor eigenpairs back to topics and weights (MATH
// §4.4), projects each topic onto the simplex and orders them by weight.
func recoverTopics(res *solver.Result, b *mat.Dense, a0 float64, single bool) *models.Model {
	d, k := b.Dims()
	m := &models.Model{Model: "lda", K: k, D: d, Alpha0: a0, Fit: &models.FitStats{}}
	scale := (a0 + 2) / 2
	if single {
		m.Model, scale = "topic", 1
	}
	type topic struct {
		weight, lambda, moved float64
		mu                    []float64
	}
	topics := make([]topic, k)
	var bv mat.VecDense
	for i := range k {
		lam := res.Weights[i]
		bv.MulVec(b, res.Factors.ColView(i))
		mu := make([]float64, d)
		for j := range d {
			mu[j] = scale * lam * bv.AtVec(j)
		}
		wt := 1 / (lam * lam)
		if !single {
			wt = 4 * a0 * (a0 + 1) / ((a0 + 2) * (a0 + 2) * lam * lam)
		}
		moved := models.ProjectSimplex(mu)
		topics[i] = topic{weight: wt, lambda: lam, moved: moved, mu: mu}
	}
	sort.SliceStable(topics, func(i, j int) bool { return topics[i].weight > topics[j].weight })
	st := &m.Fit.Solver
	st.Name = "rtpm"
	st.Restarts, st.Iters = res.Restarts, res.Iters
	st.Converged = res.Converged
	if !math.IsNaN(res.EigResidual) && !math.IsInf(res.EigResidual, 0) {
		st.EigResidual = res.EigResidual // JSON has no NaN; unknown stays 0
	}
	if !math.IsNaN(res.Residual) {
		r := res.Residual
		st.Residual = &r
	}
	for _, t := range topics {
		m.Alpha = append(m.Alpha, t.weight)
		m.Topics = append(m.Topics, t.mu)
		st.Eigenvalues = append(st.Eigenvalues, t.lambda)
		m.Fit.ProjectionL1 = append(m.Fit.ProjectionL1, t.moved)
	}
	return m
}

// whitenedM2 returns WᵀM̂2W = Ẽ2 − c·m̃m̃ᵀ as estimated by the third-moment
// pass (c = α₀/(α₀+1) for LDA, 0 for the single-topic model).
func whitenedM2(mom *implicit.Whitened, a0 float64, single bool) *mat.SymDense {
	k := mom.E2.SymmetricDim()
	m2 := mat.NewSymDense(k, nil)
	m2.CopySym(mom.E2)
	if !single {
		m2.SymRankOne(m2, -a0/(a0+1), mat.NewVecDense(k, mom.M1))
	}
	return m2
}

// powSym returns U diag(valsᵖ) Uᵀ.
func powSym(u *mat.Dense, vals []float64, p float64) *mat.Dense {
	k := len(vals)
	var s mat.Dense
	s.CloneFrom(u)
	for j, v := range vals {
		col := s.ColView(j).(*mat.VecDense)
		col.ScaleVec(math.Pow(v, p), col)
	}
	out := mat.NewDense(k, k, nil)
	out.Mul(&s, u.T())
	return out
}
