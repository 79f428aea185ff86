package synth

import (
	"context"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"

	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// SnapshotConfig describes unordered snapshot sets of a Markov chain or HMM
// (001 §3, §4): per set, π⁽⁰⁾ ~ Dirichlet(α₀π); per point, s ~ π⁽⁰⁾,
// t ~ Geometric(r) on {1,2,…}, h = state after t steps of P from s, and the
// row is e_h (chain) or U_h + σ·N(0, I) (HMM). Each row carries its set id.
type SnapshotConfig struct {
	Sets   int64 // N, the number of sets
	PerSet int   // n, points per set (at least 3)
	K      int   // number of (hidden) states
	// M is the observation dimension of the HMM; 0 generates the chain itself
	// (one-hot rows of width K).
	M      int
	Sigma2 float64 // HMM noise variance (default 2, as in 001 §4)
	Alpha0 float64 // default 1
	R      float64 // default 0.3
	// P, when non-nil, is the column-stochastic K×K transition matrix as rows
	// (P[i][j] = Pr(i | j)); otherwise one with exactly one zero entry,
	// ergodic, full rank and well separated stationary probabilities is drawn.
	P [][]float64
	// Stay is the weight β of the identity in a drawn P = βI + (1−β)Q
	// (default 0.7). A fast-mixing P makes T = E[Pᵗ] nearly rank one and the
	// model unlearnable from snapshots at any practical N.
	Stay float64
	// Family names how a P is drawn when P is nil: "stay" (the default,
	// βI + (1−β)Q above) or "flip", whose states 0 and 1 swap most of the
	// time, giving P an eigenvalue near −0.6 and rI + (1−r)T a singular point
	// (a pole of the r scan, 001 Thm 2) at r = λ/(λ−1) ≈ 0.11 for λ the
	// negative eigenvalue of T. Flip needs K ≥ 3.
	Family    string
	Seed      uint64
	BatchRows int
	Workers   int
}

// SnapshotTruth is the chain (or HMM) generated snapshots are drawn from.
// Matrices are rows: P[i][j] = Pr(next state i | state j), T likewise, and
// U[i], UT[i] are the columns Uᵢ and (UT)ᵢ of the observation matrices
// (an HMM's only).
type SnapshotTruth struct {
	// HMM says the rows are observations of the states (M > 0), not the
	// one-hot states themselves.
	HMM    bool
	K, D   int
	Alpha0 float64
	R      float64
	Pi     []float64
	P, T   [][]float64
	U, UT  [][]float64
	Sigma2 float64
}

// Snapshots is a generated snapshot table: a stream.DenseSource with set ids.
type Snapshots struct {
	// Truth is the model the rows are drawn from.
	Truth SnapshotTruth
	// Params records how the rows were generated.
	Params map[string]any
	gen    denseGen
	next   []alias // next[j]: distribution of the state after j
}

// NewSnapshots draws (or takes) the chain and returns the table source.
func NewSnapshots(cfg SnapshotConfig) (*Snapshots, error) {
	if cfg.Sigma2 == 0 {
		cfg.Sigma2 = 2
	}
	if cfg.Alpha0 == 0 {
		cfg.Alpha0 = 1
	}
	if cfg.R == 0 {
		cfg.R = 0.3
	}
	if cfg.Stay == 0 {
		cfg.Stay = 0.7
	}
	switch {
	case cfg.Sets < 0 || cfg.PerSet < 3:
		return nil, fmt.Errorf("synth: need Sets ≥ 0 and at least 3 points per set (Sets=%d, PerSet=%d)", cfg.Sets, cfg.PerSet)
	case cfg.K < 2:
		return nil, fmt.Errorf("synth: need at least 2 states, got %d", cfg.K)
	case cfg.M != 0 && cfg.M < cfg.K:
		return nil, fmt.Errorf("synth: m=%d < k=%d", cfg.M, cfg.K)
	case !(cfg.R > 0 && cfg.R <= 1) || cfg.Alpha0 < 0 || cfg.Sigma2 < 0:
		return nil, fmt.Errorf("synth: r=%g must be in (0,1], alpha0=%g and sigma2=%g positive", cfg.R, cfg.Alpha0, cfg.Sigma2)
	}
	k := cfg.K
	r := newRand(cfg.Seed, 0)
	p := cfg.P
	switch {
	case p != nil:
		if err := checkP(p, k); err != nil {
			return nil, err
		}
	case cfg.Family == "" || cfg.Family == "stay":
		if k < 3 {
			// P's one zero entry, P[1][0], and its zero-diagonal part
			// would leave column 0 of the random part empty at k=2.
			return nil, fmt.Errorf("synth: the stay family needs k ≥ 3 states, got %d; give P for a 2-state chain", k)
		}
		if p = drawChain(r, k, cfg.Stay); p == nil {
			return nil, fmt.Errorf("synth: no P with stationary probabilities %.3g apart found in %d draws for k=%d; give P", 0.15/float64(k), maxDraws, k)
		}
	case cfg.Family == "flip":
		if k < 3 {
			return nil, fmt.Errorf("synth: the flip family needs k ≥ 3 states, got %d", k)
		}
		if p = drawFlip(r, k); p == nil {
			return nil, fmt.Errorf("synth: no flip P with stationary probabilities %.3g apart found in %d draws for k=%d; give P", 0.1/float64(k), maxDraws, k)
		}
	default:
		return nil, fmt.Errorf("synth: unknown chain family %q (stay, flip)", cfg.Family)
	}
	pm := mat.NewDense(k, k, nil)
	for i := range k {
		for j := range k {
			pm.Set(i, j, p[i][j])
		}
	}
	pi := stationary(pm)
	for i, v := range pi {
		if !(v >= 0 && v <= 1) {
			return nil, fmt.Errorf("synth: P has no stationary distribution (π[%d] = %g); give an ergodic P", i, v)
		}
	}
	// T = rP(I − (1−r)P)⁻¹.
	var a mat.Dense
	a.Scale(-(1 - cfg.R), pm)
	for i := range k {
		a.Set(i, i, a.At(i, i)+1)
	}
	var inv, tm mat.Dense
	if err := inv.Inverse(&a); err != nil {
		return nil, err
	}
	tm.Mul(pm, &inv)
	tm.Scale(cfg.R, &tm)
	t := SnapshotTruth{K: k, D: k, Alpha0: cfg.Alpha0, R: cfg.R, Pi: pi, P: p, T: matRows(&tm)}
	var u *mat.Dense
	if cfg.M > 0 {
		t.HMM, t.D, t.Sigma2 = true, cfg.M, cfg.Sigma2
		cols := gaussianColumns(r, k, cfg.M, 1) // unit columns, as in 001 §4
		t.U = cols
		u = mat.NewDense(cfg.M, k, nil)
		for j, c := range cols {
			u.SetCol(j, c)
		}
		var ut mat.Dense
		ut.Mul(u, &tm)
		t.UT = make([][]float64, k)
		for j := range k {
			t.UT[j] = mat.Col(nil, j, &ut)
		}
	}
	params := map[string]any{"sets": cfg.Sets, "per_set": cfg.PerSet, "seed": cfg.Seed}
	s := &Snapshots{Truth: t, Params: params, next: make([]alias, k)}
	for j := range k {
		s.next[j].build(mat.Col(nil, j, pm))
	}
	alpha := make([]float64, k)
	for i := range k {
		alpha[i] = cfg.Alpha0 * pi[i]
	}
	sd := math.Sqrt(cfg.Sigma2)
	logq := math.Log1p(-cfg.R)
	// set appends n points of one set: its proportions from item, the points from r.
	set := func(item, r *rand.Rand, id int64, n int, out *stream.Dense) {
		p0 := make([]float64, k)
		var start alias
		dirichlet(item, p0, alpha)
		start.build(p0)
		for range n {
			h := start.draw(r)
			steps := 1
			if cfg.R < 1 {
				steps += int(math.Log(1-r.Float64()) / logq)
			}
			for range steps {
				h = s.next[h].draw(r)
			}
			if u == nil {
				for j := range k {
					out.Data = append(out.Data, b2f(int(h) == j))
				}
			} else {
				for i := range cfg.M {
					out.Data = append(out.Data, u.At(i, int(h))+sd*r.NormFloat64())
				}
			}
			out.Group = append(out.Group, id)
			out.Rows++
		}
	}
	s.gen = denseGen{layout: "snapshots", items: cfg.Sets, rowsPer: cfg.PerSet, cols: t.D, seed: cfg.Seed, grouped: true, part: set}
	s.gen.setup(cfg.BatchRows, cfg.Workers)
	s.gen.fill = func(r *rand.Rand, lo, hi int64, out *stream.Dense) {
		for id := lo; id < hi; id++ {
			set(r, r, id, cfg.PerSet, out)
		}
	}
	return s, nil
}

// Info describes the table.
func (s *Snapshots) Info() stream.Info { return s.gen.info() }

// Rows generates one pass over the table.
func (s *Snapshots) Rows(ctx context.Context) iter.Seq2[*stream.Dense, error] { return s.gen.rows(ctx) }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// maxDraws bounds the rejection loops of drawChain and drawFlip, which return
// nil when no draw passes (k states cannot all be 0.15/k apart when k is
// large: the stationary probabilities of a random P crowd near 1/k).
const maxDraws = 2000

// drawChain draws a column-stochastic k×k P = βI + (1−β)Q, Q with random
// columns, with exactly one zero entry (P[1][0]), ergodic (P² > 0), well
// conditioned, and with stationary probabilities at least 0.15/k apart (001
// matches states by sorting them). The weight on I keeps the chain from
// mixing within the few steps Geometric(r) allows: a fast-mixing P makes
// T = E[Pᵗ] nearly rank one, and nothing is learnable from snapshots.
func drawChain(r *rand.Rand, k int, stay float64) [][]float64 {
	for range maxDraws {
		pm := mat.NewDense(k, k, nil)
		for j := range k {
			col := randomColumn(r, k, j, 1, true)
			for i, v := range col {
				p := (1 - stay) * v
				if i == j {
					p += stay
				}
				pm.Set(i, j, p)
			}
		}
		if usable(pm, 0.15/float64(k)) {
			return matRows(pm)
		}
	}
	return nil
}

// checkP checks a given transition matrix: k×k, entries in [0, 1], columns
// summing to 1.
func checkP(p [][]float64, k int) error {
	if len(p) != k {
		return fmt.Errorf("synth: P has %d rows, want k=%d", len(p), k)
	}
	for i, row := range p {
		if len(row) != k {
			return fmt.Errorf("synth: P row %d has %d entries, want k=%d", i, len(row), k)
		}
		for j, v := range row {
			if !(v >= 0 && v <= 1) {
				return fmt.Errorf("synth: P[%d][%d] = %g is not a probability", i, j, v)
			}
		}
	}
	for j := range k {
		var s float64
		for i := range k {
			s += p[i][j]
		}
		if math.Abs(s-1) > 1e-9 {
			return fmt.Errorf("synth: column %d of P sums to %g; P must be column-stochastic (P[i][j] = Pr(i | j))", j, s)
		}
	}
	return nil
}

// drawFlip draws P = 0.85·B + 0.15·Q: B sends state 0 to 1 with probability
// 0.95 and state 1 to 0 with probability 0.75 (eigenvalue 1 − 0.95 − 0.75 =
// −0.7, and unequal stationary weights), and keeps every other state; Q has
// random columns with one zero, Q[2][0], which is P's only zero entry. Draws
// are repeated until P is ergodic (P² > 0), well conditioned and its
// stationary probabilities are at least 0.1/k apart.
func drawFlip(r *rand.Rand, k int) [][]float64 {
	const q = 0.15
	for range maxDraws {
		pm := mat.NewDense(k, k, nil)
		for j := range k {
			for i, v := range randomColumn(r, k, j, 2, false) {
				pm.Set(i, j, q*v)
			}
		}
		b := func(i, j int, v float64) { pm.Set(i, j, pm.At(i, j)+(1-q)*v) }
		b(0, 0, 0.05)
		b(1, 0, 0.95)
		b(0, 1, 0.75)
		b(1, 1, 0.25)
		for i := 2; i < k; i++ {
			b(i, i, 1)
		}
		if usable(pm, 0.1/float64(k)) {
			return matRows(pm)
		}
	}
	return nil
}

// randomColumn draws column j of a random stochastic matrix: entries
// 0.05 + U(0,1), normalised, with a zero in row zero of column 0 and, with
// noDiag, on the diagonal.
func randomColumn(r *rand.Rand, k, j, zero int, noDiag bool) []float64 {
	col := make([]float64, k)
	var s float64
	for i := range col {
		col[i] = 0.05 + r.Float64()
		if (j == 0 && i == zero) || (noDiag && i == j) {
			col[i] = 0
		}
		s += col[i]
	}
	for i := range col {
		col[i] /= s
	}
	return col
}

// usable reports whether a drawn P is ergodic (P² > 0), well conditioned
// (condition number at most 20) and has stationary probabilities at least gap
// apart (001 pairs states by sorting them).
func usable(pm *mat.Dense, gap float64) bool {
	var p2 mat.Dense
	p2.Mul(pm, pm)
	if mat.Min(&p2) <= 0 || mat.Cond(pm, 2) > 20 {
		return false
	}
	pi := stationary(pm)
	for i := range pi {
		for j := range i {
			if math.Abs(pi[i]-pi[j]) < gap {
				return false
			}
		}
	}
	return true
}

// stationary returns π with Pπ = π, Σπ = 1 (by powering P, which is ergodic).
func stationary(p *mat.Dense) []float64 {
	var q mat.Dense
	q.CloneFrom(p)
	for range 60 {
		q.Mul(&q, &q)
	}
	pi := mat.Col(nil, 0, &q)
	var s float64
	for _, v := range pi {
		s += v
	}
	for i := range pi {
		pi[i] /= s
	}
	return pi
}

func matRows(m *mat.Dense) [][]float64 {
	r, _ := m.Dims()
	out := make([][]float64, r)
	for i := range r {
		out[i] = append([]float64(nil), m.RawRowView(i)...)
	}
	return out
}
