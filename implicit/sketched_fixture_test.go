package implicit_test

import (
	"context"
	"math"
	"testing"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
	"gonum.org/v1/gonum/mat"
)

// ldaFixture is a generated LDA corpus with its exact whitening: W = Q D^{-1/2}
// from the top-k eigenpairs of the corpus's own M̂2 = Ê2 − α₀/(α₀+1) m̂m̂ᵀ
// (formed densely: the vocabulary is small), so the whitened tensors of the
// explicit, sketched and on-disk paths can be compared without re-whitening.
type ldaFixture struct {
	src   *synth.Corpus
	k     int
	a0    float64
	w, bw *mat.Dense // W and (Wᵀ)⁺ = Q D^{1/2}
}

func newLDAFixture(t testing.TB, docs int64, d, k int, docLen float64, seed uint64) *ldaFixture {
	t.Helper()
	src, err := synth.NewLDA(synth.LDAConfig{Docs: docs, Vocab: d, K: k, Alpha0: 1, DocLen: docLen, Seed: seed, BatchRows: 512})
	if err != nil {
		t.Fatal(err)
	}
	pa := implicit.NewPairAcc(d, d)
	eye := mat.NewDense(d, d, nil)
	for i := range d {
		eye.Set(i, i, 1)
	}
	eachBatch(t, src, func(b *stream.Docs) { pa.Add(b, eye) })
	e2 := mat.NewDense(d, d, nil)
	m1, err := pa.Mean(e2)
	if err != nil {
		t.Fatal(err)
	}
	const a0 = 1.0
	m2 := mat.NewSymDense(d, nil)
	for i := range d {
		for j := i; j < d; j++ {
			m2.SetSym(i, j, (e2.At(i, j)+e2.At(j, i))/2-a0/(a0+1)*m1[i]*m1[j])
		}
	}
	var es mat.EigenSym
	if !es.Factorize(m2, true) {
		t.Fatal("eigendecomposition failed")
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	w, bw := mat.NewDense(d, k, nil), mat.NewDense(d, k, nil)
	for j := range k {
		c := d - 1 - j // largest first
		for i := range d {
			w.Set(i, j, vecs.At(i, c)/math.Sqrt(vals[c]))
			bw.Set(i, j, vecs.At(i, c)*math.Sqrt(vals[c]))
		}
	}
	return &ldaFixture{src: src, k: k, a0: a0, w: w, bw: bw}
}

func eachBatch(t testing.TB, src stream.DocSource, fn func(*stream.Docs)) {
	t.Helper()
	for b, err := range src.Docs(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		fn(b)
		b.Release()
	}
}

// correction is LDA's (docs/MATH.md §3.5) for the pass's whitened M1 and E2.
func (f *ldaFixture) correction(m1 []float64, e2 *mat.SymDense) *implicit.Correction {
	a0 := f.a0
	return &implicit.Correction{A: -a0 / (a0 + 2), B: 2 * a0 * a0 / ((a0 + 2) * (a0 + 1)), V: m1, M: e2}
}

// explicit returns the LDA-corrected whitened third moment as a packed tensor.
func (f *ldaFixture) explicit(t testing.TB) *solver.Sym3 {
	d, _ := f.w.Dims()
	acc := implicit.NewTripleAcc(d, f.k)
	eachBatch(t, f.src, func(b *stream.Docs) { acc.Add(b, f.w) })
	mom, err := acc.Moments(f.w, 1)
	if err != nil {
		t.Fatal(err)
	}
	f.correction(mom.M1, mom.E2).AddTo(mom.E3)
	return mom.E3
}

// meanL1 recovers topics from the eigenpairs (docs/MATH.md §4.4), projects them onto
// the simplex, matches them to the truth and returns the mean ℓ1 error.
func (f *ldaFixture) meanL1(t testing.TB, res *solver.Result) float64 {
	t.Helper()
	d, k := f.bw.Dims()
	truth := f.src.Truth.Topics
	cost := make([][]float64, k)
	for i := range k {
		lam := res.Weights[i]
		var mu mat.VecDense
		mu.MulVec(f.bw, res.Factors.ColView(i))
		m := make([]float64, d)
		for j := range d {
			m[j] = (f.a0 + 2) / 2 * lam * mu.AtVec(j)
		}
		models.ProjectSimplex(m)
		cost[i] = make([]float64, k)
		for j := range k {
			cost[i][j] = models.L1(m, truth[j])
		}
	}
	match, err := models.Assign(cost)
	if err != nil {
		t.Fatal(err)
	}
	s := 0.0
	for i, j := range match {
		s += cost[i][j]
	}
	return s / float64(k)
}

// decompose runs RTPM with fixed options.
func decompose(t testing.TB, tn solver.Tensor, k int) *solver.Result {
	t.Helper()
	res, err := solver.RTPM(context.Background(), tn, k, solver.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// maxColErr applies a and b to the same random unit block and returns the
// largest column error ‖a(I,θ,θ) − b(I,θ,θ)‖ and the largest ‖b(I,θ,θ)‖.
func maxColErr(t testing.TB, a, b solver.Tensor, cols int, seed uint64) (maxErr, maxNorm float64) {
	t.Helper()
	k := a.Dim()
	theta := randomBlock(k, cols, seed)
	ga, gb := mat.NewDense(k, cols, nil), mat.NewDense(k, cols, nil)
	if err := a.Apply(context.Background(), ga, theta); err != nil {
		t.Fatal(err)
	}
	if err := b.Apply(context.Background(), gb, theta); err != nil {
		t.Fatal(err)
	}
	var diff mat.Dense
	diff.Sub(ga, gb)
	for j := range cols {
		maxErr = math.Max(maxErr, mat.Norm(diff.ColView(j), 2))
		maxNorm = math.Max(maxNorm, mat.Norm(gb.ColView(j), 2))
	}
	return maxErr, maxNorm
}

// randomBlock returns k×cols unit columns drawn from seed (deterministic).
func randomBlock(k, cols int, seed uint64) *mat.Dense {
	theta := mat.NewDense(k, cols, nil)
	x := seed*0x9e3779b97f4a7c15 + 1
	for j := range cols {
		n := 0.0
		for i := range k {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			v := float64(x>>11)/float64(1<<53) - 0.5
			theta.Set(i, j, v)
			n += v * v
		}
		for i := range k {
			theta.Set(i, j, theta.At(i, j)/math.Sqrt(n))
		}
	}
	return theta
}
