package gmm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
)

// On real data the moment fit is a start: streamed EM passes refine it by
// likelihood, as the topic models' variational EM passes refine theirs.
// Each pass is an implicit.Pass over the rows with the current mixture as
// its fixed arrays; its statistics are the responsibilities' additive
// totals
//
//	n   (k)            Σ rᵢ
//	sx  (k·d)          Σ rᵢ x
//	sxx (k, or k·d)    Σ rᵢ ‖x‖² (spherical), Σ rᵢ x∘x (diagonal)
//	ll  (1)            Σ log p(x)
//
// so shards merge exactly, statistics files checkpoint them, and the
// result does not depend on the number of workers. The M step of the
// merged totals maximises the likelihood, so the log-likelihood of the
// passes never decreases.

// EMConfig sets up the EM passes.
type EMConfig struct {
	// Passes is the most passes (default 100); Tol stops them earlier,
	// when a pass raises the average log-likelihood per row by less
	// (default 1e-3, scikit-learn's tol).
	Passes int
	Tol    float64
	// Diag fits a variance per component and feature (diagonal
	// covariances) instead of one per component (spherical).
	Diag bool
	// VarFloor is the least variance (default 1e-6, scikit-learn's
	// reg_covar); the M step maximises the likelihood under it.
	VarFloor float64
	// Workers is the number of goroutines per pass (default 1); the
	// result is the same for any value.
	Workers int
	// Seed fixes the sample rows that start components the moments do not
	// give (Start).
	Seed uint64
	// SampleRows is the size of the sample of rows (drawn in one pass)
	// on which Start runs EM in memory before the passes over all the
	// rows (default 20000; negative: no EM on a sample, and no pass unless
	// components are missing, when a sample of 1000 rows places them).
	SampleRows int
	// Starts is the number of spreads of the missing components (seeds
	// Seed, Seed+1, …) that Start refines on the sample, keeping the one of
	// the highest likelihood there once its passes gain less than 10·Tol
	// (default 4: the sample is in memory, so
	// starts cost little beside the passes over all the rows). When the
	// moments give every component, the moment start competes with one
	// start of every component at sample rows (seed Seed+1) instead.
	Starts int
}

// raceTol is how much looser than EMConfig.Tol the stopping gain of each
// start's EM on the sample is, when Start has several (see Start).
const raceTol = 10

func (c *EMConfig) defaults() {
	if c.Passes == 0 {
		c.Passes = 100
	}
	if c.Tol == 0 {
		c.Tol = 1e-3
	}
	if c.VarFloor == 0 {
		c.VarFloor = 1e-6
	}
	if c.Workers <= 0 {
		c.Workers = 1
	}
	if c.SampleRows == 0 {
		c.SampleRows = 20000
	}
	if c.Starts == 0 {
		c.Starts = 4
	}
}

// Mixture is a Gaussian mixture with a variance per component (spherical)
// or per component and feature (diagonal): what EM passes refine.
type Mixture struct {
	Model   string      `json:"model"` // "gmm" (spherical) or "gmm-diag"
	K       int         `json:"k"`
	D       int         `json:"d"`
	Weights []float64   `json:"weights"`
	Means   [][]float64 `json:"means"`
	// Variances has K rows: one variance each (spherical) or D (diagonal).
	Variances [][]float64 `json:"variances"`
	// EM describes the passes that fitted it; nil for a start.
	EM *EMRun `json:"em,omitempty"`
}

// EMRun records the EM passes of a fit.
type EMRun struct {
	Passes int `json:"passes"`
	// LogLik is the average log-likelihood per row of the mixture each
	// pass started from (non-decreasing).
	LogLik    []float64 `json:"loglik"`
	Converged bool      `json:"converged"`
	// Tol is the gain per pass below which the passes stopped (EMConfig.Tol).
	Tol float64 `json:"tol,omitempty"`
	// Started says how the components were started: from the moment fit,
	// or some from sample rows.
	Started string `json:"started"`
	// Rows is the number of rows each pass read.
	Rows int64 `json:"-"`
}

// Diag reports whether m has a variance per feature.
func (m *Mixture) Diag() bool { return m.Model == "gmm-diag" }

// Spherical returns m as a Model (variances per component); m must be
// spherical.
func (m *Mixture) Spherical() *Model {
	if m.Diag() {
		panic("gmm: Spherical of a diagonal mixture")
	}
	return m.Fitted()
}

// Fitted returns m as a Model: spherical, or diagonal (Covariance CovDiag)
// when m is.
func (m *Mixture) Fitted() *Model {
	out := &Model{Model: "gmm", K: m.K, D: m.D, Weights: m.Weights, Means: m.Means}
	if m.Diag() {
		out.Covariance, out.Diag = CovDiag, m.Variances
		return out
	}
	out.Variances = make([]float64, m.K)
	for i, v := range m.Variances {
		out.Variances[i] = v[0]
	}
	return out
}

// Write stores the mixture as a model file (Model), atomically.
func (m *Mixture) Write(path string) error {
	s := m.Fitted()
	if m.EM != nil {
		s.Fit = &FitRecord{Differing: true, Method: "em", Passes: m.EM.Passes}
	}
	return s.Write(path)
}

// valid reports whether component i is a density: a positive weight and
// variances, a finite mean.
func (m *Mixture) valid(i int) bool {
	if !(m.Weights[i] > 0) || math.IsInf(m.Weights[i], 0) {
		return false
	}
	for _, v := range m.Variances[i] {
		if !(v > 0) || math.IsInf(v, 0) {
			return false
		}
	}
	for _, x := range m.Means[i] {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// Start returns the mixture of k components that EM passes start from:
// the components of the moment fit m (nil when there is none) that are
// densities, each variance widened to diagonal when cfg.Diag, and as many
// more as k needs started at rows of a sample of src drawn with cfg.Seed
// (one pass), spread as k-means++ spreads its seeds, with the average
// variance of the kept components (of the rows when none is kept) and an
// equal share of the weight. Every variance is then raised to at least the
// sample's mean squared distance to the nearest mean, per feature (the
// moments' spherical variances are too small for real clusters), and EM
// runs on the sample in memory (see EMConfig.SampleRows) from each start
// (EMConfig.Starts) until a pass gains less than 10·Tol, and from the
// likeliest there on until one gains less than Tol. It never refuses a moment
// fit: what departs from a density is replaced.
func Start(ctx context.Context, src stream.DenseSource, m *Model, k int, cfg EMConfig) (*Mixture, error) {
	cfg.defaults()
	d := src.Info().Cols
	if d <= 0 {
		return nil, errors.New("gmm: the source does not report its number of columns")
	}
	if k < 1 {
		return nil, fmt.Errorf("gmm: k=%d, need at least one component", k)
	}
	out := &Mixture{Model: "gmm", K: k, D: d}
	if cfg.Diag {
		out.Model = "gmm-diag"
	}
	width := 1
	if cfg.Diag {
		width = d
	}
	var varSum float64
	if m != nil {
		if m.D != d {
			return nil, fmt.Errorf("gmm: the moment fit has d=%d, the rows %d", m.D, d)
		}
		for i := range min(m.K, k) {
			c := &Mixture{Weights: []float64{m.Weights[i]}, Means: [][]float64{m.Means[i]}, Variances: [][]float64{{m.Variances[i]}}}
			if !c.valid(0) {
				continue
			}
			v := make([]float64, width)
			for j := range v {
				v[j] = max(m.Variances[i], cfg.VarFloor)
			}
			out.Weights = append(out.Weights, m.Weights[i])
			out.Means = append(out.Means, append([]float64(nil), m.Means[i]...))
			out.Variances = append(out.Variances, v)
			varSum += m.Variances[i]
		}
	}
	kept := len(out.Weights)
	out.EM = &EMRun{Started: fmt.Sprintf("%d of %d components from the moment fit", kept, k)}
	need := k - kept
	if need == 0 && cfg.SampleRows < 0 {
		normalise(out.Weights)
		return out, nil
	}
	n := cfg.SampleRows
	if n < 0 {
		n = 1000 // for the spread and the variances only
	}
	var rows [][]float64
	var total float64
	var seen int64
	err := stage(ctx, "sample", func(ctx context.Context) (err error) {
		rows, total, seen, err = sampleRows(ctx, src, max(need, n), cfg.Seed)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(rows) < need {
		return nil, fmt.Errorf("gmm: %d rows cannot start %d more components", len(rows), need)
	}
	base := out
	starts := max(cfg.Starts, 1)
	if need == 0 {
		// Nothing random to try again; but the moment start may sit near
		// a poorer optimum than a start from the rows, so one of those
		// competes with it.
		starts = min(starts, 2)
	}
	var cands []*Mixture
	for try := range starts {
		out, add, from := base.clone(), need, kept
		if need == 0 && try > 0 { // every component at sample rows
			out = &Mixture{Model: base.Model, K: k, D: d, EM: &EMRun{Started: fmt.Sprintf("0 of %d components from the moment fit", k)}}
			add, from = k, 0
		}
		if add > 0 {
			v := total
			if from > 0 {
				v = varSum / float64(from)
			}
			v = max(v, cfg.VarFloor)
			share := 1.0 / float64(k)
			for i := range out.Weights {
				out.Weights[i] *= 1 - float64(add)*share
			}
			rng := rand.New(rand.NewPCG(cfg.Seed+uint64(try), 0x243f6a8885a308d3))
			for _, r := range spread(rows, out.Means, add, rng) {
				vs := make([]float64, width)
				for j := range vs {
					vs[j] = v
				}
				out.Weights = append(out.Weights, share)
				out.Means = append(out.Means, append([]float64(nil), r...))
				out.Variances = append(out.Variances, vs)
			}
			out.EM.Started += fmt.Sprintf(", %d at sample rows", add)
		}
		normalise(out.Weights)
		// A variance below the rows' mean squared distance to the nearest
		// mean (per feature) is raised to it: the moments' variances are
		// those of spherical clusters, smaller than real clusters', and
		// would have the first E step give a component no row at all.
		widen(out, rows)
		if cfg.SampleRows <= 0 {
			return out, nil
		}
		cands = append(cands, out)
	}
	// EM on the sample in memory: the passes over all the rows then
	// start near where they end.
	all := &inMemory{rows: &stream.Dense{Rows: len(rows), Cols: d, Data: make([]float64, 0, len(rows)*d)}}
	for _, r := range rows {
		all.rows.Data = append(all.rows.Data, r...)
	}
	// Every start runs EM on the sample until a pass gains less than
	// raceTol·Tol; the likeliest there goes on until one gains less than
	// Tol. The last passes of a start gain little and rarely change which
	// start is likeliest, so they run for one start, not for each.
	race := cfg
	if len(cands) > 1 {
		race.Tol = cfg.Tol * raceTol
	}
	var best *Mixture
	bestLL := math.Inf(-1)
	var started string
	for try, out := range cands {
		var warm *Mixture
		err := stage(ctx, fmt.Sprintf("start%d", try), func(ctx context.Context) (err error) {
			warm, err = refine(ctx, all, out, race, false)
			return err
		})
		if err != nil {
			return nil, err
		}
		if ll := warm.EM.LogLik[len(warm.EM.LogLik)-1]; best == nil || ll > bestLL {
			best, bestLL, started = warm, ll, out.EM.Started
		}
	}
	if race.Tol != cfg.Tol && best.EM.Passes < cfg.Passes {
		rest := cfg
		rest.Passes = cfg.Passes - best.EM.Passes
		prev := best.EM
		err := stage(ctx, "start-best", func(ctx context.Context) (err error) {
			best, err = refine(ctx, all, best, rest, false)
			return err
		})
		if err != nil {
			return nil, err
		}
		best.EM.Passes += prev.Passes
		best.EM.LogLik = append(prev.LogLik, best.EM.LogLik...)
	}
	run := &EMRun{Passes: best.EM.Passes, LogLik: best.EM.LogLik, Converged: best.EM.Converged}
	// A pass over the sample costs n/N of one over all the N rows: when
	// the sample is a part of them, the best start goes on until its
	// passes gain less than Tol·max(n/N, 1/10), so that the passes over
	// all the rows start nearer their end and fewer of them run.
	if frac := float64(len(rows)) / float64(seen); frac < 1 && run.Passes < cfg.Passes {
		tight := cfg
		tight.Tol = cfg.Tol * max(frac, 0.1)
		tight.Passes = cfg.Passes - run.Passes
		err := stage(ctx, "start-tight", func(ctx context.Context) (err error) {
			best, err = refine(ctx, all, best, tight, false)
			return err
		})
		if err != nil {
			return nil, err
		}
		run.Passes += best.EM.Passes
		run.LogLik = append(run.LogLik, best.EM.LogLik...)
		run.Converged = best.EM.Converged
	}
	run.Started = fmt.Sprintf("%s; EM on a sample of %d rows, %d passes", started, len(rows), run.Passes)
	if starts > 1 {
		run.Started += fmt.Sprintf(" (the best of %d starts)", starts)
	}
	best.EM = run
	return best, nil
}

// inMemory is the sample of Start as a source: its batches are views of
// the rows, which the E step only reads (stream.MemoryDense copies each
// batch, a cost beside an E step when d is small).
type inMemory struct{ rows *stream.Dense }

func (m *inMemory) Info() stream.Info {
	return stream.Info{Format: "memory", Cols: m.rows.Cols, Rows: int64(m.rows.Rows)}
}

func (m *inMemory) Rows(ctx context.Context) iter.Seq2[*stream.Dense, error] {
	return func(yield func(*stream.Dense, error) bool) {
		d := m.rows.Cols
		for lo := 0; lo < m.rows.Rows; lo += stream.DefaultBatchRows {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			hi := min(lo+stream.DefaultBatchRows, m.rows.Rows)
			if !yield(&stream.Dense{Start: int64(lo), Rows: hi - lo, Cols: d, Data: m.rows.Data[lo*d : hi*d : hi*d]}, nil) {
				return
			}
		}
	}
}

// widen raises every variance of m to at least the mean over rows of the
// squared distance to the nearest mean, per feature.
func widen(m *Mixture, rows [][]float64) {
	if len(rows) == 0 {
		return
	}
	var sum float64
	for _, r := range rows {
		near := math.Inf(1)
		for _, mu := range m.Means {
			var s float64
			for j, x := range r {
				s += (x - mu[j]) * (x - mu[j])
			}
			near = min(near, s)
		}
		sum += near
	}
	v := sum / float64(len(rows)) / float64(m.D)
	for _, vs := range m.Variances {
		for j := range vs {
			vs[j] = max(vs[j], v)
		}
	}
}

// clone returns a deep copy of m.
func (m *Mixture) clone() *Mixture {
	c := *m
	c.Weights = append([]float64(nil), m.Weights...)
	c.Means, c.Variances = make([][]float64, len(m.Means)), make([][]float64, len(m.Variances))
	for i := range m.Means {
		c.Means[i] = append([]float64(nil), m.Means[i]...)
		c.Variances[i] = append([]float64(nil), m.Variances[i]...)
	}
	if m.EM != nil {
		e := *m.EM
		c.EM = &e
	}
	return &c
}

// spread picks n of rows as far from means and from each other as D²
// sampling makes likely (k-means++): each next row with probability
// proportional to its squared distance to the nearest mean or row picked.
func spread(rows, means [][]float64, n int, rng *rand.Rand) [][]float64 {
	near := make([]float64, len(rows))
	for i := range near {
		near[i] = math.Inf(1)
	}
	closer := func(c []float64) {
		for i, r := range rows {
			var s float64
			for j, x := range r {
				s += (x - c[j]) * (x - c[j])
			}
			near[i] = min(near[i], s)
		}
	}
	for _, c := range means {
		closer(c)
	}
	var out [][]float64
	for len(out) < n {
		pick := -1
		if len(out) == 0 && len(means) == 0 {
			pick = rng.IntN(len(rows))
		} else {
			var sum float64
			for _, v := range near {
				sum += v
			}
			if !(sum > 0) { // every row on a mean: any will do
				pick = rng.IntN(len(rows))
			} else {
				u := rng.Float64() * sum
				for i, v := range near {
					if u -= v; u < 0 || i == len(near)-1 {
						pick = i
						break
					}
				}
			}
		}
		out = append(out, rows[pick])
		closer(rows[pick])
	}
	return out
}

// sampleRows draws n rows of src uniformly (a reservoir sample seeded by
// seed, in row order, so the same rows whatever the workers) and returns
// them with the rows' average variance per feature and their number.
func sampleRows(ctx context.Context, src stream.DenseSource, n int, seed uint64) ([][]float64, float64, int64, error) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	var res [][]float64
	var seen int64
	var sum, sum2 []float64
	for b, err := range src.Rows(ctx) {
		if err != nil {
			return nil, 0, 0, err
		}
		if sum == nil {
			sum, sum2 = make([]float64, b.Cols), make([]float64, b.Cols)
		}
		for i := range b.Rows {
			x := b.Row(i)
			for j, v := range x {
				sum[j] += v
				sum2[j] += v * v
			}
			seen++
			switch {
			case len(res) < n:
				res = append(res, append([]float64(nil), x...))
			default:
				if r := rng.Int64N(seen); r < int64(n) {
					copy(res[r], x)
				}
			}
		}
		b.Release()
	}
	var v float64
	for j := range sum {
		m := sum[j] / float64(seen)
		v += sum2[j]/float64(seen) - m*m
	}
	if len(sum) > 0 {
		v /= float64(len(sum))
	}
	return res, v, seen, nil
}

func normalise(w []float64) { floats.Scale(1/floats.Sum(w), w) }

// emParams are the settings of an EM pass's statistics.
type emParams struct {
	Diag     bool    `json:"diag,omitempty"`
	VarFloor float64 `json:"var_floor"`
}

// EMPass returns the pass that sums the E step of the mixture m (its
// statistics: n, sx, sxx and ll above); phase numbers it in the header,
// path names the input in errors.
func EMPass(m *Mixture, floor float64, phase int, path string) *implicit.Pass {
	k, d := m.K, m.D
	width := 1
	if m.Diag() {
		width = d
	}
	e, w, mu, v := mixEStep(m)
	e.path = path
	pr, _ := json.Marshal(emParams{Diag: m.Diag(), VarFloor: floor})
	h := statsfile.Header{Model: "gmm-em", Phase: phase, D: d, K: k, Cols: k, Params: pr}
	return &implicit.Pass{
		Header: h,
		Sums:   []implicit.SumShape{{Name: "n", Len: k}, {Name: "sx", Len: k * d}, {Name: "sxx", Len: k * width}, {Name: "ll", Len: 1}},
		Fixed:  []implicit.Fixed{{Name: "weights", Values: w}, {Name: "means", Values: mu}, {Name: "variances", Values: v}},
		Worker: func() implicit.BatchFunc { return e.worker() },
	}
}

// mixEStep returns the E step of m with its weights, means and variances
// laid out flat.
func mixEStep(m *Mixture) (e *eStep, w, mu, v []float64) {
	k, d := m.K, m.D
	w = append([]float64(nil), m.Weights...)
	mu = make([]float64, 0, k*d)
	v = make([]float64, 0, k*len(m.Variances[0]))
	for i := range k {
		mu = append(mu, m.Means[i]...)
		v = append(v, m.Variances[i]...)
	}
	return newEStep(w, mu, v, k, d, m.Diag()), w, mu, v
}

// pass runs the E step of mix over the sample and returns its totals n,
// sx, sxx and ll (see EMPass) in float64: each batch's by one of up to
// workers goroutines, then added in batch order, so the same figures
// whatever workers. The sample is Start's, in memory: its passes need
// neither the exact sums that merge shards (whose rounding back to
// float64 weighed as much as an E step on a small sample) nor a log.
func (s *inMemory) pass(ctx context.Context, mix *Mixture, workers int) ([][]float64, error) {
	e, _, _, _ := mixEStep(mix)
	k, d := mix.K, mix.D
	lens := []int{k, k * d, k * e.width, 1}
	var batches []*stream.Dense
	for b, err := range s.Rows(ctx) {
		if err != nil {
			return nil, err
		}
		batches = append(batches, b)
	}
	sums := func() [][]float64 {
		out := make([][]float64, len(lens))
		for j, n := range lens {
			out[j] = make([]float64, n)
		}
		return out
	}
	workers = max(min(workers, len(batches)), 1)
	adds, part, errs := make([]implicit.BatchFunc, workers), make([][][]float64, workers), make([]error, workers)
	for w := range workers {
		adds[w], part[w] = e.worker(), sums()
	}
	tot := sums()
	implicit.InOrderN(len(batches), workers, func(w, i int) {
		if errs[w] != nil {
			return
		}
		if errs[w] = ctx.Err(); errs[w] != nil {
			return
		}
		for _, x := range part[w] {
			clear(x)
		}
		errs[w] = adds[w](batches[i], part[w], nil)
	}, func(w, i int) {
		if errs[w] != nil {
			return
		}
		for j := range tot {
			if i == 0 {
				copy(tot[j], part[w][j])
			} else {
				floats.Add(tot[j], part[w][j])
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return tot, nil
}

// eStep holds what the E step of every batch shares. A row x enters as
// its features f = (x, x∘x, 1) (diagonal) or (x, ‖x‖², 1) (spherical), a
// columns in all, so that with the coefficients of component i
//
//	cᵢ = (μᵢ/vᵢ, −½/vᵢ, log wᵢ − ½ Σ log 2πvᵢ − ½ Σ μᵢ²/vᵢ)
//
// the k log-densities log wᵢN(x; μᵢ, vᵢ) of a batch of rows F are one
// product with C, and the pass's totals n, sx and sxx are one product of F
// with the responsibilities R: two gonum products a batch. Their inner
// loops run along the longer of a and k (wide: C is k×a, the products
// F·Cᵀ and RᵀF; else C is a×k, F·C and FᵀR), so that at d = 3 (image
// pixels) a row is a few runs of k rather than k runs of 5.
type eStep struct {
	path     string
	k, d     int
	diag     bool
	a, width int
	wide     bool
	coef     []float64 // k×a (wide) or a×k, row-major
}

func newEStep(w, mu, v []float64, k, d int, diag bool) *eStep {
	width := 1
	if diag {
		width = d
	}
	a := d + width + 1
	e := &eStep{k: k, d: d, diag: diag, a: a, width: width, wide: a > k, coef: make([]float64, a*k)}
	set := func(i, j int, v float64) {
		if e.wide {
			e.coef[i*a+j] = v
		} else {
			e.coef[j*k+i] = v
		}
	}
	for i := range k {
		konst := math.Log(w[i])
		if !(w[i] > 0) {
			konst = math.Inf(-1) // an empty component takes no rows
		}
		for j := range d {
			vij := v[i]
			if diag {
				vij = v[i*d+j]
			}
			m := mu[i*d+j]
			konst -= 0.5*math.Log(2*math.Pi*vij) + 0.5*m*m/vij
			set(i, j, m/vij)
			if diag {
				set(i, d+j, -0.5/vij)
			}
		}
		if !diag {
			set(i, d, -0.5/v[i])
		}
		set(i, a-1, konst)
	}
	return e
}

// at returns entry (i, j) of the k×a totals t of a batch (RᵀF), laid out as
// coef is.
func (e *eStep) at(t []float64, i, j int) float64 {
	if e.wide {
		return t[i*e.a+j]
	}
	return t[j*e.k+i]
}

// features writes the features of the rows of b (see eStep) to f.
func (e *eStep) features(b *stream.Dense, f []float64) {
	d, a := e.d, e.a
	for r := range b.Rows {
		x, fr := b.Data[r*d:(r+1)*d], f[r*a:(r+1)*a]
		copy(fr, x)
		if e.diag {
			for j, v := range x {
				fr[d+j] = v * v
			}
		} else {
			fr[d] = floats.Dot(x, x)
		}
		fr[a-1] = 1
	}
}

// estepScratch is the scratch of an E step's batch, kept between batches
// and passes (scratch): EM runs many passes, and on small data a pass's
// allocation and zeroing of its buffers weighed as much as its products.
type estepScratch struct{ lp, f []float64 }

var scratch sync.Pool

// worker returns the function that adds one batch, with its scratch.
func (e *eStep) worker() implicit.BatchFunc {
	tot := make([]float64, e.a*e.k)
	return func(b *stream.Dense, out [][]float64, _ func() error) error {
		if b == nil {
			return nil
		}
		if err := models.CheckRows(e.path, b, e.d); err != nil {
			return err
		}
		n, k, d, a := b.Rows, e.k, e.d, e.a
		sc, _ := scratch.Get().(*estepScratch)
		if sc == nil {
			sc = new(estepScratch)
		}
		defer scratch.Put(sc)
		if cap(sc.lp) < n*k {
			sc.lp = make([]float64, n*k)
		}
		if cap(sc.f) < n*a {
			sc.f = make([]float64, n*a)
		}
		lp, f := sc.lp[:n*k], sc.f[:n*a]
		e.features(b, f)
		fm := blas64.General{Rows: n, Cols: a, Stride: a, Data: f}
		l := blas64.General{Rows: n, Cols: k, Stride: k, Data: lp}
		if e.wide {
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, fm, blas64.General{Rows: k, Cols: a, Stride: a, Data: e.coef}, 0, l)
		} else {
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, fm, blas64.General{Rows: a, Cols: k, Stride: k, Data: e.coef}, 0, l)
		}
		var ll float64
		for r := range n {
			row := lp[r*k : (r+1)*k]
			top := floats.Max(row)
			var s float64
			for i, v := range row {
				// Below e⁻⁴⁰ of the largest a share is lost in the
				// rounding of the sum: no exp for it.
				if v -= top; v > -40 {
					row[i] = math.Exp(v)
					s += row[i]
				} else {
					row[i] = 0
				}
			}
			floats.Scale(1/s, row)
			ll += top + math.Log(s)
		}
		// Totals RᵀF: columns 0…d−1 are sx, then sxx, then n (F's column
		// of ones).
		if e.wide {
			blas64.Gemm(blas.Trans, blas.NoTrans, 1, l, fm, 0, blas64.General{Rows: k, Cols: a, Stride: a, Data: tot})
		} else {
			blas64.Gemm(blas.Trans, blas.NoTrans, 1, fm, l, 0, blas64.General{Rows: a, Cols: k, Stride: k, Data: tot})
		}
		for i := range k {
			for j := range d {
				out[1][i*d+j] = e.at(tot, i, j)
			}
			for j := range e.width {
				out[2][i*e.width+j] = e.at(tot, i, d+j)
			}
			out[0][i] = e.at(tot, i, a-1)
		}
		out[3][0] = ll
		return nil
	}
}

// MStep returns the mixture that maximises the likelihood given the
// merged statistics st of an EM pass of m (variances at least floor), and
// the average log-likelihood per row of m. A component that took no rows
// keeps its mean and variances with weight 0.
func MStep(m *Mixture, st *implicit.DenseStats, floor float64) (*Mixture, float64, error) {
	if st.Rows == 0 {
		return nil, 0, errors.New("gmm: no rows")
	}
	k, d := m.K, m.D
	nk, sx, sxx, ll := st.Sum("n"), st.Sum("sx"), st.Sum("sxx"), st.Sum("ll")
	if len(nk) != k || len(sx) != k*d || ll == nil {
		return nil, 0, errors.New("gmm: not the statistics of an EM pass of this mixture")
	}
	total := float64(st.Rows)
	return mstep(m, nk, sx, sxx, total, floor), ll[0] / total, nil
}

// mstep is MStep from the totals nk, sx and sxx of an E step over total
// rows.
func mstep(m *Mixture, nk, sx, sxx []float64, total, floor float64) *Mixture {
	k, d := m.K, m.D
	out := &Mixture{Model: m.Model, K: k, D: d, Weights: make([]float64, k), Means: make([][]float64, k), Variances: make([][]float64, k), EM: m.EM}
	for i := range k {
		out.Weights[i] = nk[i] / total
		if !(nk[i] > 0) {
			out.Weights[i] = 0
			out.Means[i] = append([]float64(nil), m.Means[i]...)
			out.Variances[i] = append([]float64(nil), m.Variances[i]...)
			continue
		}
		mu := make([]float64, d)
		for j := range d {
			mu[j] = sx[i*d+j] / nk[i]
		}
		out.Means[i] = mu
		if m.Diag() {
			v := make([]float64, d)
			for j := range d {
				v[j] = max(sxx[i*d+j]/nk[i]-mu[j]*mu[j], floor)
			}
			out.Variances[i] = v
		} else {
			var q float64
			for _, x := range mu {
				q += x * x
			}
			out.Variances[i] = []float64{max((sxx[i]/nk[i]-q)/float64(d), floor)}
		}
	}
	return out
}

// Refine runs EM passes over src from start until a pass gains less than
// cfg.Tol in average log-likelihood per row, or cfg.Passes passes, and
// returns the mixture of the last M step with the passes' log-likelihoods
// in its EM record.
//
// Each pass is handed to the log ctx carries (models.WithPassLog).
func Refine(ctx context.Context, src stream.DenseSource, start *Mixture, cfg EMConfig) (*Mixture, error) {
	return refine(ctx, src, start, cfg, true)
}

// refine is Refine; log says whether the passes go to ctx's log (not
// those on the sample in memory of Start).
func refine(ctx context.Context, src stream.DenseSource, start *Mixture, cfg EMConfig, log bool) (*Mixture, error) {
	cfg.defaults()
	m := start
	run := &EMRun{Tol: cfg.Tol}
	if start.EM != nil {
		run.Started = start.EM.Started
	}
	for p := range cfg.Passes {
		t0 := time.Now()
		var next *Mixture
		var ll float64
		var rows int64
		if mem, ok := src.(*inMemory); ok {
			tot, err := mem.pass(ctx, m, cfg.Workers)
			if err != nil {
				return nil, err
			}
			rows = int64(mem.rows.Rows)
			next, ll = mstep(m, tot[0], tot[1], tot[2], float64(rows), cfg.VarFloor), tot[3][0]/float64(rows)
		} else {
			st, err := EMPass(m, cfg.VarFloor, p+1, src.Info().Path).Run(ctx, src.Rows, cfg.Workers)
			if err != nil {
				return nil, err
			}
			if next, ll, err = MStep(m, st, cfg.VarFloor); err != nil {
				return nil, err
			}
			rows = st.Rows
		}
		m = next
		if log {
			models.LogPass(ctx, models.PassDone{Pass: p + 1, Stage: "em", Rows: rows, Took: time.Since(t0), LogLik: ll})
		}
		if run.record(ll, rows, cfg.Tol) {
			break
		}
	}
	m.EM = run
	return m, nil
}

// record notes a pass over rows rows from a mixture of average
// log-likelihood ll per row, and reports whether the passes stop there:
// the pass gained less than tol over the one before.
func (r *EMRun) record(ll float64, rows int64, tol float64) bool {
	r.Passes++
	r.LogLik = append(r.LogLik, ll)
	r.Rows = rows
	if n := len(r.LogLik); n > 1 && r.LogLik[n-1]-r.LogLik[n-2] < tol {
		r.Converged = true
	}
	return r.Converged
}
