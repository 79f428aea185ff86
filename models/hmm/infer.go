package hmm

import (
	"context"
	"math"

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
// Gaussian N(x; O[j], σ²I) with σ² of all states alike, since a fit gives
// the means O but no variance: σ² is estimated by the method of moments
// from a first pass, E‖x‖² = Σⱼ wⱼ‖O[j]‖² + dσ², with w the mean state
// distribution over the steps (π carried forward by T). workers is
// unused: sequences are read one at a time, so memory is one sequence.
func Posteriors(ctx context.Context, m *Model, src stream.DenseSource, workers int, emit func(first int64, rows int, shares []float64) error) error {
	if err := m.validate(); err != nil {
		return err
	}
	em, err := emissionOf(ctx, m, src)
	if err != nil {
		return err
	}
	path := src.Info().Path
	s := smoother{m: m, em: em, a: transitions(m)}
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
		g, bad := s.smooth(rows, n)
		if bad >= 0 {
			return stream.Errorf(path, 0, start+int64(bad), "", stream.ErrValue, "sequence %d has probability 0 under the model at this step", id)
		}
		rows = rows[:0]
		return emit(start, n, g)
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

// emission says how a row is emitted: its symbol's probability, or an
// isotropic Gaussian of variance 1/(2·half).
type emission struct {
	discrete bool
	half     float64 // 1/(2σ²)
}

// emissionOf reads a pass of src to choose the emission: discrete when
// every row is one-hot, else Gaussian with σ² by the method of moments.
func emissionOf(ctx context.Context, m *Model, src stream.DenseSource) (emission, error) {
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
	return emission{half: 1 / (2 * s2)}, nil
}

// smoother holds the scratch of one sequence's forward–backward sums.
type smoother struct {
	m         *Model
	em        emission
	a         []float64 // transitions(m)
	b, al, be []float64
	c         []float64
}

// smooth returns the state posteriors of the n rows of one sequence, k per
// row, and -1; or nil and the first step whose rows have probability 0
// under the model. The emissions of a step are scaled by a constant (their
// largest is 1), which the posteriors do not see.
func (s *smoother) smooth(rows []float64, n int) ([]float64, int) {
	m := s.m
	k, d := m.K, m.D
	s.b, s.al, s.be, s.c = growTo(s.b, n*k), growTo(s.al, n*k), growTo(s.be, n*k), growTo(s.c, n)
	for t := range n {
		s.emit(rows[t*d:(t+1)*d], s.b[t*k:(t+1)*k])
	}
	if t := scaledForwardBackward(m.Pi, s.a, s.b, n, k, s.al, s.be, s.c); t >= 0 {
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

// emit fills b with the emission of row x in each state, up to a factor
// common to the states.
func (s *smoother) emit(x, b []float64) {
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
		return
	}
	top := math.Inf(-1)
	for j, o := range s.m.O {
		var dist float64
		for u, xu := range x {
			dist += (xu - o[u]) * (xu - o[u])
		}
		b[j] = -dist * s.em.half
		top = max(top, b[j])
	}
	for j := range b {
		b[j] = math.Exp(b[j] - top)
	}
}
