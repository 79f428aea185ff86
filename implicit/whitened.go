package implicit

import (
	"errors"
	"fmt"

	"github.com/streamfit/streamfit/tensor"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Whitened holds the raw moments of a pass, averaged over the used
// documents: in the whitened space E3 = Ê3(W,W,W), E2 = WᵀÊ2W and M1 = WᵀM̂1
// (docs/MATH.md §3.4–3.5), and in the vocabulary RawM1 = M̂1 and E2W = Ê2·W. Models
// combine them with their own coefficients. E3 is nil for statistics
// without cubes (TripleAcc.NoCubes).
type Whitened struct {
	Counts
	M1    []float64
	E2    *mat.SymDense
	E3    *tensor.Sym3
	RawM1 []float64
	E2W   *mat.Dense
}

// wChunk is the number of vocabulary rows whose W-terms are formed as one
// piece; pieces are summed in a fixed order.
const wChunk = 512

// wTerms forms in s.acc (valid entries as in Y3), for vocabulary rows
// lo..hi−1, the terms of Ê3(W,W,W) in W: 2 Σᵢ G3ᵢ ωᵢ⊗3 − 3 Σᵢ Sym₃(Zᵢ, ωᵢ, ωᵢ),
// formed as Σᵢ (2 G3ᵢ ωᵢ − Zᵢ) ⊗ ωᵢ⊗ωᵢ − Σᵢ ωᵢ ⊗ (Zᵢ⊗ωᵢ + ωᵢ⊗Zᵢ): two
// products of K³/6 per row that touch only the entries a ≤ b ≤ c, instead
// of the full K × K(K+1)/2 sums of Zᵢ⊗ωᵢ⊗ωᵢ (K³/2 per row) that the three
// orderings of Sym₃ would each read from, in precision F.
func wTerms[F real](a *TripleAcc, wd []float64, lo, hi int, s *wScratch[F]) {
	k := a.K
	m := hi - lo
	s.w = convert(s.w, wd[lo*k:hi*k])
	s.z = convert(s.z, a.Z[lo*k:hi*k])
	s.gw, s.nw = grow(s.gw, m*k), grow(s.nw, m*k)
	for r := range m {
		w, z := s.w[r*k:(r+1)*k], s.z[r*k:(r+1)*k]
		g, n := s.gw[r*k:(r+1)*k], s.nw[r*k:(r+1)*k]
		g3 := F(2 * a.G3[lo+r])
		for j := range k {
			g[j] = g3*w[j] - z[j]
			n[j] = -w[j]
		}
	}
	s.acc = grow(s.acc, k*pairs(k))
	clear(s.acc)
	s.kr = addCubes(s.acc, s.gw, k, s.w, nil, m, k, s.kr)
	s.kr = addCubes(s.acc, s.nw, k, s.w, s.z, m, k, s.kr)
}

// wScratch holds one worker's buffers for wTerms.
type wScratch[F real] struct{ w, z, gw, nw, acc, kr []F }

// addWTerms adds the W-terms of the whole vocabulary to acc, formed in
// precision F a fixed piece of wChunk words at a time on workers
// goroutines and added in piece order, so that acc does not depend on
// workers.
func addWTerms[F real](a *TripleAcc, wd []float64, workers int, acc []float64) {
	pieces := (a.D + wChunk - 1) / wChunk
	bufs := make([]wScratch[F], max(1, min(workers, pieces)))
	InOrderN(pieces, len(bufs), func(wk, i int) {
		wTerms(a, wd, i*wChunk, min(a.D, (i+1)*wChunk), &bufs[wk])
	}, func(wk, _ int) {
		for i, v := range bufs[wk].acc {
			acc[i] += float64(v)
		}
	})
}

// Moments averages the statistics and forms the terms that depend only on W
// (the whitening matrix the pass used), at O(d·K³/3) once per fit (E3 is
// nil, and that cost absent, for statistics without cubes: NoCubes). The
// terms are formed in float32 pieces when a.Float32 is set, as a pass's
// batches form Y3: at k=100 they are the largest fixed cost of a fit, and
// float32 GEMMs form them 1.4 times as fast. The vocabulary is cut into
// fixed pieces computed on workers goroutines and summed in order, so the
// result does not depend on workers.
func (a *TripleAcc) Moments(w *mat.Dense, workers int) (*Whitened, error) {
	return a.MomentsGiven(w, nil, workers)
}

// MomentsGiven is Moments for statistics without the pair sums (NoPair):
// e2w (d×K) is Ê2·W as measured over the same documents by another pass,
// such as the power pass whose span holds W. With the pair sums it is
// Moments, and e2w (which may be nil) is not read.
func (a *TripleAcc) MomentsGiven(w, e2w *mat.Dense, workers int) (*Whitened, error) {
	if r, c := w.Dims(); r != a.D || c != a.K {
		panic(fmt.Sprintf("implicit: Moments(d=%d, k=%d) given W of %d×%d", a.D, a.K, r, c))
	}
	if a.Docs == 0 {
		return nil, ErrNoDocs
	}
	if !a.NoPair {
		return a.moments(w, nil, workers), nil
	}
	if e2w == nil {
		return nil, errors.New("implicit: statistics without the pair sums (NoPair) need Ê2·W: give it to MomentsGiven")
	}
	if r, c := e2w.Dims(); r != a.D || c != a.K {
		panic(fmt.Sprintf("implicit: MomentsGiven(d=%d, k=%d) given Ê2·W of %d×%d", a.D, a.K, r, c))
	}
	return a.moments(w, mat.DenseCopyOf(e2w), workers), nil
}

// moments is Moments with Ê2·W given (e2w, owned by the result) or, nil,
// formed from the pair sums.
func (a *TripleAcc) moments(w, e2w *mat.Dense, workers int) *Whitened {
	wd := contiguous(w) // read only
	var e3 *tensor.Sym3
	if !a.NoCubes {
		e3 = a.cubes(wd, workers)
	}
	if e2w == nil {
		e2w = a.pairSums(wd)
	}
	e2, m1, raw := a.pair(wd, e2w)
	return &Whitened{Counts: a.Counts, M1: m1, E2: e2, E3: e3, RawM1: raw, E2W: e2w}
}

// cubes returns Ê3(W,W,W) from Y3 and the W-terms.
func (a *TripleAcc) cubes(wd []float64, workers int) *tensor.Sym3 {
	k := a.K
	acc := append([]float64(nil), a.Y3...)
	if a.Float32 {
		addWTerms[float32](a, wd, workers, acc)
	} else {
		addWTerms[float64](a, wd, workers, acc)
	}
	e3 := tensor.NewSym3(k)
	packCubes(e3.Data, acc, k, 1/float64(a.Docs))
	e3.Invalidate()
	return e3
}

// Aggregated returns the operator of the terms of Ê3(W,W,W)(I,θ,θ) that a
// pass sums over documents into Z and G3 (docs/MATH.md §3.3):
// [Wᵀ(2 G3⊙u⊙u − 2 u⊙(Zθ)) − Zᵀ(u⊙u)]/N with u = Wθ, i.e. everything but
// the rows' Σ (yᵀθ)² y/n3, for representations that keep the rows elsewhere
// (NoCubes with OnRows). It shares a's memory; w is the pass's W.
func (a *TripleAcc) Aggregated(w *mat.Dense) (*Operator, error) {
	ta := &TripleAcc{D: a.D, K: a.K, Counts: a.Counts, Z: a.Z, G3: a.G3, KeepRows: true}
	return ta.Operator(w)
}

// pairSums returns Ê2·W = (Z2 − diag(G2) W)/N.
func (a *TripleAcc) pairSums(wd []float64) *mat.Dense {
	k, d := a.K, a.D
	inv := 1 / float64(a.Docs)
	e2w := mat.NewDense(d, k, nil)
	for i := range d {
		out := e2w.RawRowView(i)
		floats.ScaleTo(out, inv, a.Z2[i*k:(i+1)*k])
		floats.AddScaled(out, -a.G2[i]*inv, wd[i*k:(i+1)*k])
	}
	return e2w
}

// pair returns WᵀÊ2W from e2w = Ê2·W, WᵀM̂1 and M̂1.
func (a *TripleAcc) pair(wd []float64, e2w *mat.Dense) (e2 *mat.SymDense, m1, raw []float64) {
	k, d := a.K, a.D
	inv := 1 / float64(a.Docs)
	var g mat.Dense
	g.Mul(mat.NewDense(d, k, wd).T(), e2w)
	e2 = mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			e2.SetSym(i, j, (g.At(i, j)+g.At(j, i))/2)
		}
	}
	raw = make([]float64, d)
	floats.ScaleTo(raw, inv, a.M1)
	m1 = make([]float64, k)
	mat.NewVecDense(k, m1).MulVec(mat.NewDense(d, k, wd).T(), mat.NewVecDense(d, raw))
	return e2, m1, raw
}
