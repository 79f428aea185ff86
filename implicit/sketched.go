package implicit

import (
	"fmt"
	"sync"

	"github.com/streamfit/streamfit/sketch"
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

// sketchLanes is the number of partial sketches the rows of a pass are
// spread over (row r of a batch of n to lane ⌊r·lanes/n⌋), each filled by
// its own goroutine and summed in lane order: the sketching, one FFT per
// document and sketch, then runs on several cores, and the sums do not
// depend on the number of workers.
const sketchLanes = 4

// SketchAcc accumulates the whitened raw third moment Ê3(W,W,W) of a pass as
// a tensor sketch: the statistics of a TripleAcc without cubes (NoCubes)
// and, through its row hook (OnRows), the per-document terms y⊗3/n3 sketched
// as they stream by (one FFT of length b per document and sketch); the
// terms that docs/MATH.md §3.4 sums over documents first, 2 Σᵢ G3ᵢ ωᵢ⊗3 −
// Σᵢ Sym₃(Zᵢ, ωᵢωᵢᵀ) (ωᵢ = row i of W), are sketched once by Moments from
// the d×K aggregates. Memory is sketchLanes·Count·(b/2+1) complex numbers
// plus O(d·K), never K³; statistics of two shards add up (Merge). Pass and
// Add are the TripleAcc's.
type SketchAcc struct {
	*TripleAcc
	cfg   SketchConfig
	lanes []*sketch.TensorSketch
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
	return newSketchAcc(d, k, cfg, ts)
}

func newSketchAcc(d, k int, cfg SketchConfig, proto *sketch.TensorSketch) *SketchAcc {
	a := &SketchAcc{TripleAcc: NewTripleAccNoCubes(d, k), cfg: cfg, lanes: make([]*sketch.TensorSketch, sketchLanes)}
	a.lanes[0] = proto
	for i := 1; i < sketchLanes; i++ {
		a.lanes[i] = proto.Empty()
	}
	a.OnRows = a.addRows
	return a
}

// Empty returns empty statistics with the same shape and hashes, for a
// worker or shard whose statistics will be merged into a.
func (a *SketchAcc) Empty() *SketchAcc {
	return newSketchAcc(a.D, a.K, a.cfg, a.lanes[0].Empty())
}

// addRows sketches Σ y⊗3/n3 over a batch's rows, the rows split evenly
// over the lanes.
func (a *SketchAcc) addRows(y, inv3 []float64) error {
	n, k := len(inv3), a.K
	var wg sync.WaitGroup
	for l, ts := range a.lanes {
		lo, hi := n*l/len(a.lanes), n*(l+1)/len(a.lanes)
		if lo == hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ts.AddCubes(inv3[lo:hi], y[lo*k:hi*k])
		}()
	}
	wg.Wait()
	return nil
}

// Merge adds o into a: same whitening matrix and sketch required.
func (a *SketchAcc) Merge(o *SketchAcc) error {
	if err := a.TripleAcc.Merge(o.TripleAcc); err != nil {
		return err
	}
	for i, l := range a.lanes {
		if err := l.Merge(o.lanes[i]); err != nil {
			return err
		}
	}
	return nil
}

// SketchedMoments holds the whitened moments of a pass averaged over the used
// documents, with the third one as a tensor sketch: E3 sketches Ê3(W,W,W),
// and Whitened (E3 nil) the pair moments, as TripleAcc.Moments gives them.
type SketchedMoments struct {
	*Whitened
	E3 *sketch.TensorSketch
}

// Moments averages the statistics (TripleAcc.Moments) and sketches the
// third moment (E3).
func (a *SketchAcc) Moments(w *mat.Dense, workers int) (*SketchedMoments, error) {
	mom, err := a.TripleAcc.Moments(w, workers)
	if err != nil {
		return nil, err
	}
	e3, err := a.E3(w, workers)
	if err != nil {
		return nil, err
	}
	return &SketchedMoments{Whitened: mom, E3: e3}, nil
}

// e3Parts is the number of parts of the vocabulary whose terms E3 sketches
// separately and sums in order: a constant, so the sum does not depend on the
// number of workers that sketch them.
const e3Parts = 8

// E3 returns the sketch of Ê3(W,W,W), averaged over the used documents: the
// rows' sketches plus the terms in W, sketched with the vocabulary split
// into e3Parts parts (each its own sketch, at most workers at a time, summed
// in order, so the result is the same for any workers). It costs two FFTs
// of length b per vocabulary term with a non-zero count and sketch; a is
// left unchanged.
func (a *SketchAcc) E3(w *mat.Dense, workers int) (*sketch.TensorSketch, error) {
	if a.Docs == 0 {
		return nil, ErrNoDocs
	}
	d := a.D
	nparts := max(1, min(e3Parts, d))
	parts := make([]*sketch.TensorSketch, nparts)
	sem := make(chan struct{}, max(1, workers))
	var wg sync.WaitGroup
	for p := range nparts {
		parts[p] = a.lanes[0].Empty()
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			a.sketchWTerms(parts[p], w, d*p/nparts, d*(p+1)/nparts)
		}()
	}
	wg.Wait()
	e3 := a.lanes[0].Empty()
	for _, s := range append(append([]*sketch.TensorSketch(nil), a.lanes...), parts...) {
		if err := e3.Merge(s); err != nil {
			return nil, err
		}
	}
	e3.Scale(1 / float64(a.Docs))
	return e3, nil
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
