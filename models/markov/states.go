package markov

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/streamfit/streamfit/models"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// spectrum is the eigendecomposition of a symmetric matrix, eigenvalues in
// decreasing order, the columns of vecs in the same order.
type spectrum struct {
	vals []float64
	vecs *mat.Dense
}

func spectrumOf(m *mat.SymDense, what string) (*spectrum, error) {
	var es mat.EigenSym
	if !es.Factorize(m, true) {
		return nil, fmt.Errorf("markov: eigendecomposition of %s did not converge", what)
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	d := len(vals)
	idx := make([]int, d)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return vals[idx[a]] > vals[idx[b]] })
	s := &spectrum{vals: make([]float64, d), vecs: mat.NewDense(d, d, nil)}
	for j, c := range idx {
		s.vals[j] = vals[c]
		for i := range d {
			s.vecs.Set(i, j, vecs.At(i, c))
		}
	}
	return s, nil
}

// positive is the number of eigenvalues of the matrix − shift·I that are
// positive: the directions a whitening can use.
func (s *spectrum) positive(shift float64) int {
	for j, v := range s.vals {
		if !(v-shift > 0) {
			return j
		}
	}
	return len(s.vals)
}

// aboveNoise is the number of eigenvalues of the matrix − shift·I above
// the magnitude of its most negative one. The moments estimate matrices
// that are positive semidefinite, so a negative eigenvalue is sampling
// noise, and a positive one no larger than it cannot be told from noise:
// whitened, it would multiply that noise by 1/√λ in every component.
func (s *spectrum) aboveNoise(shift float64) int {
	floor := math.Max(0, shift-s.vals[len(s.vals)-1])
	for j, v := range s.vals {
		if !(v-shift > floor) {
			return j
		}
	}
	return len(s.vals)
}

// whiten returns the whitening of the matrix − shift·I on its k leading
// eigenvectors, which must be positive (k ≤ positive(shift)).
func (s *spectrum) whiten(k int, shift float64) *whitening {
	d := len(s.vals)
	wh := &whitening{w: mat.NewDense(d, k, nil), b: mat.NewDense(d, k, nil), vals: make([]float64, k)}
	for j := range k {
		v := s.vals[j] - shift
		wh.vals[j] = v
		r := math.Sqrt(v)
		for i := range d {
			u := s.vecs.At(i, j)
			wh.w.Set(i, j, u/r)
			wh.b.Set(i, j, u*r)
		}
	}
	return wh
}

// hmmWhitenings is what pass 1 fixes for an HMM's pass 2 and fit: the
// number of states the moments give, σ², and the whitenings of the point
// moment M2 = V2 − σ²I (U; nil for one-hot rows) and of the set moment
// M2' (UT).
type hmmWhitenings struct {
	states   int
	sigma2   float64
	u, ut    *whitening
	shortWhy string // why states < Config.K
}

const setMomentName = "M2' = (α0+1)C2 − α0V1V1ᵀ"

// hmmWhitening finds the number of states c ≤ cfg.K the pass-1 moments can
// give, the largest at which M2' and (unless cfg.Discrete) M2 = V2 − σ²(c)I
// both have c eigenvalues above noise (aboveNoise; σ² is found for c
// states), and their whitenings. It fails only when not one state can be given.
func hmmWhitening(ps *pairStats, cfg *Config) (*hmmWhitenings, error) {
	set, err := spectrumOf(setM2(ps, cfg.Alpha0), setMomentName)
	if err != nil {
		return nil, err
	}
	var point *spectrum
	var cov []float64 // ascending
	if !cfg.Discrete {
		d := len(ps.v1)
		if point, err = spectrumOf(ps.v2, "V2"); err != nil {
			return nil, err
		}
		c := mat.NewSymDense(d, nil)
		c.SymRankOne(ps.v2, -1, mat.NewVecDense(d, ps.v1))
		var es mat.EigenSym
		if !es.Factorize(c, false) {
			return nil, fmt.Errorf("markov: eigendecomposition of the covariance did not converge")
		}
		cov = es.Values(nil)
	}
	h := &hmmWhitenings{}
	var whys []string
	if d := len(ps.v1); cfg.K > d {
		whys = append(whys, fmt.Sprintf("k=%d exceeds the dimension d=%d", cfg.K, d))
	}
	for c, first := min(cfg.K, len(ps.v1)), true; c >= 1; first = false {
		n := set.aboveNoise(0)
		why := fmt.Sprintf("the set moment %s has only %d %s above the magnitude of its most negative one, %.3g", setMomentName, n, eigenvalues(n), -min(0, set.vals[len(set.vals)-1]))
		if point != nil {
			h.sigma2 = sigma2Of(cov, c, cfg.Sigma2)
			if p := point.aboveNoise(h.sigma2); p < n {
				n, why = p, fmt.Sprintf("the point moment M2 = V2 − σ²I (σ²=%.4g) has only %d %s above the magnitude of its most negative one, %.3g", h.sigma2, p, eigenvalues(p), -min(0, point.vals[len(point.vals)-1]-h.sigma2))
			}
		}
		if n >= c {
			h.states, h.shortWhy = c, strings.Join(whys, "; ")
			h.ut = set.whiten(c, 0)
			if point != nil {
				h.u = point.whiten(c, h.sigma2)
			}
			return h, nil
		}
		if first {
			whys = append(whys, why)
		}
		c = min(c-1, n)
	}
	return nil, fmt.Errorf("markov: %s, k=%d: not one state can be fitted (too few sets, or rows that do not vary within sets)", strings.Join(whys, "; "), cfg.K)
}

func eigenvalues(n int) string {
	if n == 1 {
		return "eigenvalue"
	}
	return "eigenvalues"
}

// looksOneHot reports whether the pass-1 moments are those of one-hot
// rows: E[xxᵀ] = diag(E[x]) and E[x] sums to 1 (exact for one-hot rows).
func looksOneHot(ps *pairStats) bool {
	d := len(ps.v1)
	if math.Abs(floats.Sum(ps.v1)-1) > 1e-9 {
		return false
	}
	for i := range d {
		for j := i; j < d; j++ {
			want := 0.0
			if i == j {
				want = ps.v1[i]
			}
			if math.Abs(ps.v2.At(i, j)-want) > 1e-9 {
				return false
			}
		}
	}
	return true
}

// sigma2Of is σ² for c states: the given one, or the mean of the d−c+1
// smallest covariance eigenvalues (cov ascending), which are σ² in the
// population (001 takes the smallest, which is biased low).
func sigma2Of(cov []float64, c int, given float64) float64 {
	if given > 0 {
		return given
	}
	n := len(cov) - c + 1
	return math.Max(floats.Sum(cov[:n])/float64(n), 0)
}

// withCopies returns m, a model of c states, as a model of k > c states:
// state c+j is a copy of the (j mod c)-th most likely state. A state and
// its copies have its observation mean, its column of UT and its outgoing
// transitions, and share equally its start probability and the
// probability of entering it. Lumping every copy with its original gives
// m's chain back, with the same observations, so the model's distribution
// of every snapshot, set and sequence is m's: the copies add no fit, only
// the k states asked for.
func withCopies(m *Model, k int) {
	c := m.K
	byWeight := make([]int, c)
	for i := range byWeight {
		byWeight[i] = i
	}
	sort.SliceStable(byWeight, func(a, b int) bool { return m.Pi[byWeight[a]] > m.Pi[byWeight[b]] })
	src := make([]int, k)
	share := make([]float64, c)
	for i := range k {
		src[i] = i
		if i >= c {
			src[i] = byWeight[(i-c)%c]
		}
		share[src[i]]++
	}
	pi := make([]float64, k)
	p := make([][]float64, k)
	u, ut := make([][]float64, k), make([][]float64, k)
	for i, s := range src {
		pi[i] = m.Pi[s] / share[s]
		p[i] = make([]float64, k)
		for j, t := range src {
			p[i][j] = m.P[s][t] / share[s]
		}
		if m.U != nil {
			u[i] = append([]float64(nil), m.U[s]...)
		}
		if m.UT != nil {
			ut[i] = append([]float64(nil), m.UT[s]...)
		}
	}
	m.K, m.Pi, m.P = k, pi, p
	if m.U != nil {
		m.U = u
	}
	if m.UT != nil {
		m.UT = ut
	}
}

// emissions returns the symbol probabilities of the states of a one-hot
// fit: each column of UT projected onto the simplex, then smoothed as the
// posterior mean under a uniform Dirichlet prior with the state's expected
// number of rows, πᵢ·rows, as its count: (nᵢ·Π(UTᵢ) + 1)/(nᵢ + d). Every
// symbol keeps a probability of at least 1/(nᵢ + d), so a symbol that the
// projection set to 0 (or one never seen) gives a held-out row a finite
// log-likelihood, and the smoothing vanishes as the rows grow.
func emissions(ut [][]float64, pi []float64, rows int64) [][]float64 {
	out := make([][]float64, len(ut))
	for i, col := range ut {
		d := float64(len(col))
		n := pi[i] * float64(rows)
		e := append([]float64(nil), col...)
		models.ProjectSimplex(e)
		for s := range e {
			e[s] = (n*e[s] + 1) / (n + d)
		}
		out[i] = e
	}
	return out
}
