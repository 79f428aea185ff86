package sketchbench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/streamfit/streamfit/bench/rss"
	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream/synth"
	"gonum.org/v1/gonum/mat"
)

// Corpus is a generated LDA corpus with a whitening W (d×k) spanning its true
// topics and B = (Wᵀ)⁺.
type Corpus struct {
	Src     *synth.Corpus
	K       int
	Alpha0  float64
	W, B    *mat.Dense
	Workers int
}

// NewCorpus generates the corpus and whitens the population M2 = Σ wᵢμᵢμᵢᵀ
// (wᵢ = αᵢ/(α₀(α₀+1))) of its truth: with A = [√wᵢ μᵢ] = U S Vᵀ, W = U S⁻¹.
func NewCorpus(docs int64, d, k int, docLen float64, seed uint64, workers int) (*Corpus, error) {
	const a0 = 1.0
	src, err := synth.NewLDA(synth.LDAConfig{Docs: docs, Vocab: d, K: k, Alpha0: a0, DocLen: docLen, Seed: seed})
	if err != nil {
		return nil, err
	}
	a := mat.NewDense(d, k, nil)
	for i, mu := range src.Truth.Topics {
		s := math.Sqrt(src.Truth.Alpha[i] / (a0 * (a0 + 1)))
		for j, v := range mu {
			a.Set(j, i, s*v)
		}
	}
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		return nil, errors.New("sketchbench: SVD of the true topics failed")
	}
	var u mat.Dense
	svd.UTo(&u)
	sv := svd.Values(nil)
	w, b := mat.DenseCopyOf(&u), mat.DenseCopyOf(&u)
	for j, s := range sv {
		w.ColView(j).(*mat.VecDense).ScaleVec(1/s, u.ColView(j))
		b.ColView(j).(*mat.VecDense).ScaleVec(s, u.ColView(j))
	}
	return &Corpus{Src: src, K: k, Alpha0: a0, W: w, B: b, Workers: workers}, nil
}

// Prepared is a whitened, LDA-corrected third moment ready for the solver,
// re-whitened by P, with the matching B' = B·g^{1/2}.
type Prepared struct {
	T solver.Tensor
	B *mat.Dense
}

// Correction is LDA's (docs/MATH.md §3.5) for the pass's whitened M1 and E2.
func (c *Corpus) Correction(m1 []float64, e2 *mat.SymDense) *implicit.Correction {
	a0 := c.Alpha0
	return &implicit.Correction{A: -a0 / (a0 + 2), B: 2 * a0 * a0 / ((a0 + 2) * (a0 + 1)), V: m1, M: e2}
}

// Rewhiten returns P = g^{-1/2} and B·g^{1/2} for g = Ẽ2 − α₀/(α₀+1) m̃m̃ᵀ,
// the pass's measured WᵀM̂2W.
func (c *Corpus) Rewhiten(m1 []float64, e2 *mat.SymDense) (p, b *mat.Dense, err error) {
	k := c.K
	g := mat.NewSymDense(k, nil)
	g.CopySym(e2)
	g.SymRankOne(g, -c.Alpha0/(c.Alpha0+1), mat.NewVecDense(k, m1))
	var es mat.EigenSym
	if !es.Factorize(g, true) {
		return nil, nil, errors.New("sketchbench: eigendecomposition of WᵀM̂2W failed")
	}
	vals := es.Values(nil)
	var v mat.Dense
	es.VectorsTo(&v)
	half, inv := mat.NewDense(k, k, nil), mat.NewDense(k, k, nil)
	for j, x := range vals {
		if !(x > 0) {
			return nil, nil, fmt.Errorf("sketchbench: WᵀM̂2W has eigenvalue %g", x)
		}
		vj := v.ColView(j)
		var o mat.Dense
		o.Outer(1, vj, vj)
		half.Add(half, scaled(math.Sqrt(x), &o))
		inv.Add(inv, scaled(1/math.Sqrt(x), &o))
	}
	b = new(mat.Dense)
	b.Mul(c.B, half)
	return inv, b, nil
}

func scaled(f float64, m *mat.Dense) *mat.Dense {
	m.Scale(f, m)
	return m
}

// Topics recovers the topics of the eigenpairs with b (docs/MATH.md §4.4) and
// projects each onto the simplex.
func (c *Corpus) Topics(res *solver.Result, b *mat.Dense) [][]float64 {
	d, _ := b.Dims()
	out := make([][]float64, len(res.Weights))
	for i, lam := range res.Weights {
		var mu mat.VecDense
		mu.MulVec(b, res.Factors.ColView(i))
		m := make([]float64, d)
		for j := range d {
			m[j] = (c.Alpha0 + 2) / 2 * lam * mu.AtVec(j)
		}
		models.ProjectSimplex(m)
		out[i] = m
	}
	return out
}

// Score matches fitted topics to the truth and returns the mean and largest
// ℓ1 errors (a topic not found counts 2) and how many are within
// models.FoundL1.
func (c *Corpus) Score(topics [][]float64) (mean, worst float64, found int, err error) {
	truth := c.Src.Truth.Topics
	k := len(truth)
	cost := make([][]float64, len(topics))
	for i, m := range topics {
		cost[i] = make([]float64, k)
		for j := range k {
			cost[i][j] = models.L1(m, truth[j])
		}
	}
	match, err := models.Assign(cost)
	if err != nil {
		return 0, 0, 0, err
	}
	for i, j := range match {
		mean += cost[i][j] / float64(k)
		worst = math.Max(worst, cost[i][j])
		if cost[i][j] < models.FoundL1 {
			found++
		}
	}
	mean += 2 * float64(k-len(match)) / float64(k)
	return mean, worst, found, nil
}

// Outcome is one representation's measurements.
type Outcome struct {
	Name          string
	Pass, Solve   time.Duration
	ReprBytes     int64 // what the representation holds (memory, or disk for rows)
	PeakRSS       int64 // peak RSS above the process's RSS before the pass
	MeanL1, MaxL1 float64
	Found         int     // topics within models.FoundL1 of a true one
	RelErr        float64 // ‖T(I,Θ,Θ) − explicit‖_F / ‖explicit‖_F on a random block
}

// Measure runs build (the pass and finishing), then RTPM with opt (skipped
// when opt.Iters < 0: mean ℓ1 is then NaN), and fills an Outcome; ref, when
// non-nil, is the explicit tensor RelErr uses.
func (c *Corpus) Measure(ctx context.Context, name string, build func() (*Prepared, int64, error), opt solver.Options, ref solver.Tensor) (*Outcome, *Prepared, error) {
	if err := rss.Reset(); err != nil && !errors.Is(err, rss.ErrUnsupported) {
		return nil, nil, err
	}
	base, _ := rss.Current()
	t0 := time.Now()
	p, bytes, err := build()
	if err != nil {
		return nil, nil, err
	}
	t1 := time.Now()
	var res *solver.Result
	if opt.Iters >= 0 {
		res, err = solver.RTPM(ctx, p.T, c.K, opt)
	}
	t2 := time.Now()
	peak, _ := rss.Peak()
	if err != nil && !errors.Is(err, solver.ErrNonPositive) {
		return nil, nil, err
	}
	o := &Outcome{Name: name, Pass: t1.Sub(t0), Solve: t2.Sub(t1), ReprBytes: bytes, PeakRSS: max(0, peak-base)}
	if res != nil && res.Factors != nil {
		if o.MeanL1, o.MaxL1, o.Found, err = c.Score(c.Topics(res, p.B)); err != nil {
			return nil, nil, err
		}
	} else {
		o.MeanL1, o.MaxL1 = math.NaN(), math.NaN()
	}
	if ref != nil {
		if o.RelErr, err = RelErr(ctx, p.T, ref, 20, 7); err != nil {
			return nil, nil, err
		}
	}
	return o, p, nil
}

// RelErr is ‖a(I,Θ,Θ) − b(I,Θ,Θ)‖_F / ‖b(I,Θ,Θ)‖_F for cols random unit θ.
func RelErr(ctx context.Context, a, b solver.Tensor, cols int, seed uint64) (float64, error) {
	k := a.Dim()
	theta := mat.NewDense(k, cols, nil)
	x := seed | 1
	for i := range k {
		for j := range cols {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			theta.Set(i, j, float64(x>>11)/float64(1<<53)-0.5)
		}
	}
	for j := range cols {
		col := theta.ColView(j).(*mat.VecDense)
		col.ScaleVec(1/mat.Norm(col, 2), col)
	}
	ga, gb := mat.NewDense(k, cols, nil), mat.NewDense(k, cols, nil)
	if err := a.Apply(ctx, ga, theta); err != nil {
		return 0, err
	}
	if err := b.Apply(ctx, gb, theta); err != nil {
		return 0, err
	}
	var d mat.Dense
	d.Sub(ga, gb)
	return mat.Norm(&d, 2) / mat.Norm(gb, 2), nil
}
