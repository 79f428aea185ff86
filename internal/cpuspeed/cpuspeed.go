// Package cpuspeed measures how fast this machine runs the work a fit's CPU
// goes to, against the machine the cost models' constants were fitted on,
// so that a plan forecasts CPU seconds for the machine it runs on rather
// than for that one. The probe is a fixed workload of the two kinds that
// dominate a fit: float32 GEMMs of the third-moment cubes' shape (gonum's
// kernels), and scalar work on scattered memory (exponentials added at
// random places of a table, as the E-step, the folds of exact totals and
// the scatters do).
package cpuspeed

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// referenceNS is the probe's time on the reference machine, the one whose
// fits the cost constants of models/lda's plan were fitted to. That
// machine is not at hand: the figure is the probe's time on a slower one
// (9–10 ms) times the median ratio of the plan's prediction there, at the
// constants' speed, to the CPU eight fits used (bench/scale/RESULTS.md,
// "The plan at the machine's speed").
const referenceNS = 5.0e6

var (
	once   sync.Once
	factor float64
)

// Factor is this machine's time for the probe's work relative to the
// reference machine's: 2 means fits take about twice the CPU seconds the
// cost constants predict. It is measured once per process (Probe: about
// 50 ms of one core) and clamped to [1/8, 8].
func Factor() float64 {
	once.Do(func() { factor = min(max(float64(Probe())/referenceNS, 1.0/8), 8) })
	return factor
}

// Probe returns the median of five runs of the probe's work, in wall time
// on one goroutine. On a shared machine a run's time moves by a third with
// the other load of the moment (runs of 2.3 and 4.3 ms of the same
// scattered work a second apart); the median is the speed a fit of many
// seconds meets more often than the fastest run is.
func Probe() time.Duration {
	w := newWork()
	w.run() // the table's pages
	runs := make([]time.Duration, 5)
	for i := range runs {
		t0 := time.Now()
		w.run()
		runs[i] = time.Since(t0)
	}
	slices.Sort(runs)
	return runs[len(runs)/2]
}

// work is the probe's inputs, made once from a fixed seed.
type work struct {
	a, b, c blas32.General
	x       []float64
	idx     []int32
	table   []float64
}

const (
	// chunkRows, block and pairCols are a cubes' GEMM at k≈50: a chunk
	// of documents' whitened rows (a block of them) against their
	// Khatri–Rao products.
	chunkRows, block, pairCols = 64, 24, 300
	gemms                      = 16
	// scattered is the number of exponentials added into table (256 KiB:
	// a larger table made the probe's time depend on where its pages fell).
	scattered = 1 << 18
	tableLen  = 1 << 15
)

func newWork() *work {
	r := rand.New(rand.NewPCG(1, 2))
	mat := func(rows, cols int) blas32.General {
		g := blas32.General{Rows: rows, Cols: cols, Stride: cols, Data: make([]float32, rows*cols)}
		for i := range g.Data {
			g.Data[i] = float32(r.NormFloat64())
		}
		return g
	}
	w := &work{a: mat(chunkRows, block), b: mat(chunkRows, pairCols), c: mat(block, pairCols),
		x: make([]float64, scattered), idx: make([]int32, scattered), table: make([]float64, tableLen)}
	for i := range w.x {
		w.x[i] = -5 * r.Float64()
		w.idx[i] = int32(r.IntN(tableLen))
	}
	return w
}

func (w *work) run() {
	for range gemms {
		w.gemm()
	}
	w.scatter()
}

func (w *work) gemm() { blas32.Gemm(blas.Trans, blas.NoTrans, 1e-3, w.a, w.b, 1, w.c) }

func (w *work) scatter() {
	t := w.table
	for i, v := range w.x {
		t[w.idx[i]] += math.Exp(v)
	}
}
