package implicit

import (
	"fmt"
	"sync"

	"github.com/streamfit/streamfit/sketch"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// SketchConfig chooses the tensor sketch of a sketched third moment.
type SketchConfig struct {
	// Len is the length b of each count sketch (a power of two is fastest).
	Len int
	// Count is the number of independent sketches (default 1).
	Count int
	// Seed draws the hashes; the same seed gives the same sketch.
	Seed uint64
	// Mean combines the sketches' estimates by their mean, which keeps the
	// estimate a symmetric tensor. The default, the coordinate-wise median,
	// is robust to the heavy tail of the sketch error: a sketch is nearly
	// exact unless bucket sums collide, and then it can be far off.
	Mean bool
}

// SketchAcc accumulates the whitened raw third moment Ê3(W,W,W) of a pass as
// a tensor sketch: the per-document terms y⊗3/n3 go into the sketch as they
// stream by (one FFT of length b per document and sketch), and the terms
// that MATH §3.4 sums over documents first, 2 Σᵢ G3ᵢ ωᵢ⊗3 − Σᵢ Sym₃(Zᵢ, ωᵢωᵢᵀ)
// (ωᵢ = row i of W), are sketched once by Moments from the d×K aggregates.
// Memory is Count·b complex numbers plus O(d·K), never K³; statistics of two
// shards add up (Merge).
type SketchAcc struct {
	RowStats
	// Rows is the sketch of Σ y⊗3/n3 over the documents added so far.
	Rows *sketch.TensorSketch
	cfg  SketchConfig
}

// NewSketchAcc returns empty statistics for vocabulary size d and k
// whitened dimensions.
func NewSketchAcc(d, k int, cfg SketchConfig) *SketchAcc {
	if cfg.Count <= 0 {
		cfg.Count = 1
	}
	if cfg.Len < 2 {
		panic(fmt.Sprintf("implicit: SketchConfig.Len must be at least 2, got %d", cfg.Len))
	}
	ts := sketch.NewTensorSketch(k, cfg.Len, cfg.Count, cfg.Seed)
	ts.Median = !cfg.Mean
	return &SketchAcc{RowStats: *NewRowStats(d, k), Rows: ts, cfg: cfg}
}

// Empty returns empty statistics with the same shape and hashes, for a
// worker whose statistics will be merged into a.
func (a *SketchAcc) Empty() *SketchAcc {
	return &SketchAcc{RowStats: *NewRowStats(a.D, a.K), Rows: a.Rows.Empty(), cfg: a.cfg}
}

// Add accumulates the documents of b whitened by w (D×K).
func (a *SketchAcc) Add(b *stream.Docs, w *mat.Dense) {
	y, inv3 := a.RowStats.Add(b, w)
	a.Rows.AddCubes(inv3, y)
}

// Merge adds o into a: same whitening matrix and sketch required.
func (a *SketchAcc) Merge(o *SketchAcc) error {
	if err := a.RowStats.Merge(&o.RowStats); err != nil {
		return err
	}
	return a.Rows.Merge(o.Rows)
}

// SketchedMoments holds the whitened moments of a pass averaged over the used
// documents, with the third one as a tensor sketch: E3 sketches Ê3(W,W,W),
// E2 = WᵀÊ2W and M1 = WᵀM̂1 as in Whitened.
type SketchedMoments struct {
	Counts
	M1 []float64
	E2 *mat.SymDense
	E3 *sketch.TensorSketch
}

// Moments averages the statistics and sketches the terms in W, splitting the
// vocabulary into workers parts (each its own sketch, summed in order, so the
// result depends only on workers). It costs two FFTs of length b per
// vocabulary term with a non-zero count and sketch, once per fit; a is left
// unchanged.
func (a *SketchAcc) Moments(w *mat.Dense, workers int) (*SketchedMoments, error) {
	m1, e2, err := a.Pair(w)
	if err != nil {
		return nil, err
	}
	d := a.D
	workers = max(1, min(workers, d))
	parts := make([]*sketch.TensorSketch, workers)
	var wg sync.WaitGroup
	for p := range workers {
		parts[p] = a.Rows.Empty()
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.sketchWTerms(parts[p], w, d*p/workers, d*(p+1)/workers)
		}()
	}
	wg.Wait()
	e3 := a.Rows.Empty()
	if err := e3.Merge(a.Rows); err != nil {
		return nil, err
	}
	for _, p := range parts {
		if err := e3.Merge(p); err != nil {
			return nil, err
		}
	}
	e3.Scale(1 / float64(a.Docs))
	return &SketchedMoments{Counts: a.Counts, M1: m1, E2: e2, E3: e3}, nil
}

// sketchWTerms adds 2 G3ᵢ ωᵢ⊗3 − Sym₃(Zᵢ, ωᵢωᵢᵀ) for terms lo..hi−1 to ts.
func (a *SketchAcc) sketchWTerms(ts *sketch.TensorSketch, w *mat.Dense, lo, hi int) {
	k := a.K
	for i := lo; i < hi; i++ {
		if a.G3[i] == 0 {
			continue // the term never occurred in a used document: Zᵢ = 0 too
		}
		om := w.RawRowView(i)
		ts.AddSym3Outer(-1, a.Z[i*k:(i+1)*k], om, 2*a.G3[i])
	}
}

// Correct adds the correction c (A·Sym₃(V, M) + B·V⊗3) to the sketched E3, so
// the sketch holds the corrected tensor and its error scales with the
// corrected tensor's norm rather than the raw moment's.
func (m *SketchedMoments) Correct(c *Correction) {
	c.check(m.E3.Dim())
	var s mat.Symmetric
	if c.M != nil {
		s = c.M
	}
	m.E3.AddSym3(c.A, c.V, s, c.B)
}
