package hmm

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// Posteriors calls emit with the posterior probability of each state at
// each time step of the sequences of src under m, given the whole sequence
// (forward–backward smoothing, hmmlearn's predict_proba): one call per
// sequence, in row order, rows rows from the sequence's first row first,
// k shares per row summing to 1 (emit must not keep them). Every row needs
// its sequence id (the source's group column); a sequence's rows are
// consecutive.
//
// The emission of a row x in state j is its symbol's probability Σₛ xₛ
// O[j][s] when every row of src is one-hot (a discrete HMM), else the
// Gaussian N(x; O[j], Var[j]·I) with the model's variances when it has
// them (Baum–Welch's of Gaussian observations), N(x; O[j],
// diag(VarDiag[j])) when it has a variance per state and coordinate,
// else with σ² of all states
// alike, since a moment fit gives the means O but no variance: σ² is
// estimated by the method of moments from a first pass, E‖x‖² = Σⱼ
// wⱼ‖O[j]‖² + dσ², with w the mean state distribution over the steps (π
// carried forward by T). workers is unused: sequences are read one at a
// time, so memory is one sequence.
func Posteriors(ctx context.Context, m *Model, src stream.DenseSource, workers int, emit func(first int64, rows int, shares []float64) error) error {
	return sequences(ctx, m, src, func(s *smoother, id, start int64, rows []float64, n int) error {
		g, bad := s.smooth(rows, n)
		if bad >= 0 {
			return stream.Errorf(src.Info().Path, 0, start+int64(bad), "", stream.ErrValue, "sequence %d has probability 0 under the model at this step", id)
		}
		return emit(start, n, g)
	})
}

// LogLikelihood returns the average log-likelihood per row of the
// sequences of src under m, Σ log p(sequence) / rows (its held-out score:
// streamfit eval --heldout), with the emissions of Posteriors: a Gaussian
// model's own variances (Model.Var or Model.VarDiag) when it has them, else one estimated
// from src for all states. workers is unused, as for Posteriors.
func LogLikelihood(ctx context.Context, m *Model, src stream.DenseSource, workers int) (*models.RowScore, error) {
	var sum float64
	var rows int64
	err := sequences(ctx, m, src, func(s *smoother, id, start int64, x []float64, n int) error {
		ll, bad := s.loglik(x, n)
		if bad >= 0 {
			return stream.Errorf(src.Info().Path, 0, start+int64(bad), "", stream.ErrValue, "sequence %d has probability 0 under the model at this step", id)
		}
		sum += ll
		rows += int64(n)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if rows == 0 {
		return nil, fmt.Errorf("%s: no rows to score", src.Info().Path)
	}
	return &models.RowScore{Rows: rows, LogLik: sum / float64(rows)}, nil
}

// sequences calls fn with each sequence of src in turn: its id, its first
// row, its n rows (fn must not keep them) and the smoother of m's
// emissions (emissionOf).
func sequences(ctx context.Context, m *Model, src stream.DenseSource, fn func(s *smoother, id, start int64, rows []float64, n int) error) error {
	if err := m.validate(); err != nil {
		return err
	}
	em, err := emissionOf(ctx, m, src)
	if err != nil {
		return err
	}
	path := src.Info().Path
	if em.v != nil {
		em.lnorm = sphericalNorm(em.v, m.D)
	}
	s := &smoother{m: m, em: em, a: transitions(m), o: slices.Concat(m.O...)}
	var (
		rows  []float64
		id    int64
		start int64
	)
	flush := func() error {
		n := len(rows) / m.D
		if n == 0 {
			return nil
		}
		err := fn(s, id, start, rows, n)
		rows = rows[:0]
		return err
	}
	for b, err := range src.Rows(ctx) {
		if err != nil {
			return err
		}
		if err := checkBatch(path, m, b); err != nil {
			b.Release()
			return err
		}
		for i := range b.Rows {
			if len(rows) > 0 && b.Group[i] != id {
				if err := flush(); err != nil {
					b.Release()
					return err
				}
			}
			if len(rows) == 0 {
				id, start = b.Group[i], b.Start+int64(i)
			}
			rows = append(rows, b.Row(i)...)
		}
		b.Release()
	}
	return flush()
}

// checkBatch refuses rows without sequence ids or of the wrong width.
func checkBatch(path string, m *Model, b *stream.Dense) error {
	if len(b.Group) != b.Rows {
		return stream.Errorf(path, 0, b.Start, "", stream.ErrSchema, "hmm state posteriors need the sequence id of every row (the source's group column)")
	}
	if b.Cols != m.D {
		return stream.Errorf(path, 0, b.Start, "", stream.ErrValue, "rows of %d values, the model's d=%d", b.Cols, m.D)
	}
	return nil
}

// emission says how a row is emitted: its symbol's probability, an
// isotropic Gaussian of variance v[j] in state j, or (vd set) a diagonal
// one of variances vd[j·d+c]; lnorm holds the Gaussians' log normalisers
// (for v, set where the smoother is made).
type emission struct {
	discrete  bool
	v         []float64
	vd, lnorm []float64
}

// emissionOf chooses the emission: Gaussian with the model's variances
// when it has them (Model.Var, Model.VarDiag); else, from a pass of src, discrete when
// every row is one-hot, else Gaussian with one σ² for all states by the
// method of moments.
func emissionOf(ctx context.Context, m *Model, src stream.DenseSource) (emission, error) {
	if m.VarDiag != nil {
		vd := make([]float64, 0, m.K*m.D)
		for _, row := range m.VarDiag {
			vd = append(vd, row...)
		}
		return emission{vd: vd, lnorm: diagNorm(vd, m.K, m.D)}, nil
	}
	if m.Var != nil {
		return emission{v: m.Var}, nil
	}
	oneHot := true
	var sq float64
	var rows int64
	var steps []int64 // steps[t]: rows that are step t of their sequence
	var t int
	var id int64
	path := src.Info().Path
	for b, err := range src.Rows(ctx) {
		if err != nil {
			return emission{}, err
		}
		if err := checkBatch(path, m, b); err != nil {
			b.Release()
			return emission{}, err
		}
		for i := range b.Rows {
			if rows == 0 || b.Group[i] != id {
				id, t = b.Group[i], 0
			}
			if t == len(steps) {
				steps = append(steps, 0)
			}
			steps[t]++
			t++
			rows++
			ones := 0
			for _, v := range b.Row(i) {
				sq += v * v
				switch v {
				case 0:
				case 1:
					ones++
				default:
					ones = 2
				}
			}
			oneHot = oneHot && ones == 1
		}
		b.Release()
	}
	if rows == 0 || oneHot {
		return emission{discrete: true}, nil
	}
	// w: the state distribution averaged over every row's step.
	w := make([]float64, m.K)
	p := append([]float64(nil), m.Pi...)
	next := make([]float64, m.K)
	for _, n := range steps {
		for j := range w {
			w[j] += float64(n) / float64(rows) * p[j]
		}
		for i := range next {
			next[i] = 0
			for j := range p {
				next[i] += m.T[i][j] * p[j]
			}
		}
		p, next = next, p
	}
	var means float64
	for j, o := range m.O {
		for _, v := range o {
			means += w[j] * v * v
		}
	}
	mean := sq / float64(rows)
	// Rows that sit on the means (noise below rounding) still need a
	// positive variance: a millionth of the rows' mean square.
	s2 := max((mean-means)/float64(m.D), 1e-6*mean/float64(m.D), math.SmallestNonzeroFloat64)
	v := make([]float64, m.K)
	for j := range v {
		v[j] = s2
	}
	return emission{v: v}, nil
}

// smoother holds the scratch of one sequence's forward–backward sums.
type smoother struct {
	m         *Model
	em        emission
	o         []float64 // m's means, k×d row-major (gaussEmit)
	a         []float64 // transitions(m)
	b, al, be []float64
	c         []float64
}

// forward fills the emissions and the scaled forward–backward sums of the
// n rows of one sequence, and returns their log-likelihood and -1; or the
// first step whose rows have probability 0 under the model.
func (s *smoother) forward(rows []float64, n int) (float64, int) {
	m := s.m
	k, d := m.K, m.D
	s.b, s.al, s.be, s.c = growTo(s.b, n*k), growTo(s.al, n*k), growTo(s.be, n*k), growTo(s.c, n)
	var ll float64
	for t := range n {
		ll += s.emit(rows[t*d:(t+1)*d], s.b[t*k:(t+1)*k])
	}
	if t := scaledForwardBackward(m.Pi, s.a, s.b, n, k, s.al, s.be, s.c); t >= 0 {
		return 0, t
	}
	for _, c := range s.c[:n] {
		ll += math.Log(c)
	}
	return ll, -1
}

// loglik returns the log-likelihood of the n rows of one sequence and -1,
// or the first step whose rows have probability 0 under the model.
func (s *smoother) loglik(rows []float64, n int) (float64, int) { return s.forward(rows, n) }

// smooth returns the state posteriors of the n rows of one sequence, k per
// row, and -1; or nil and the first step whose rows have probability 0
// under the model. The emissions of a step are scaled by a constant (their
// largest is 1), which the posteriors do not see.
func (s *smoother) smooth(rows []float64, n int) ([]float64, int) {
	k := s.m.K
	if _, t := s.forward(rows, n); t >= 0 {
		return nil, t
	}
	// γ_t ∝ α_t β_t; the scaled product already sums to 1 up to rounding.
	for t := range n {
		g := s.al[t*k : (t+1)*k]
		var sum float64
		for j := range k {
			g[j] *= s.be[t*k+j]
			sum += g[j]
		}
		for j := range g {
			g[j] /= sum
		}
	}
	return s.al, -1
}

// emit fills b with the emission of row x in each state divided by a
// factor common to the states, and returns the factor's log: the symbol's
// probability (factor 1), or the Gaussian density in log space, scaled so
// that the largest is 1.
func (s *smoother) emit(x, b []float64) float64 {
	if s.em.discrete {
		for j, o := range s.m.O {
			var v float64
			for u, xu := range x {
				if xu != 0 {
					v += xu * o[u]
				}
			}
			b[j] = max(v, 0)
		}
		return 0
	}
	return gaussEmit(x, s.o, s.em.v, s.em.vd, s.em.lnorm, b)
}
