package markov

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// pOfPair returns P(r) = (rU + (1−r)V)⁺V for a d×k U and V (least squares
// when d > k; U = I gives the chain's (rI + (1−r)T)⁻¹T).
func pOfPair(u, v *mat.Dense, r float64) (*mat.Dense, error) {
	var a, b, p mat.Dense
	a.Scale(r, u)
	b.Scale(1-r, v)
	a.Add(&a, &b)
	if err := p.Solve(&a, v); err != nil {
		return nil, err
	}
	return &p, nil
}

// exhaustiveStates is the largest k whose k! pairings are all tried, and
// searchStates the largest k for the local search (O(k²) swaps a sweep, each
// a k×k solve per grid point); above it 001's sorted pairing is kept.
const (
	exhaustiveStates = 6
	searchStates     = 20
)

// pairSlack is the factor by which a pairing's P(r) may be farther from
// stochastic than the best one's and still be chosen for its weights.
const pairSlack = 5

// pairScanStep is the r grid step of the scans that compare pairings, and
// pairRSlack how far above the smallest scanned r a pairing's may be.
const (
	pairScanStep = 0.01
	pairRSlack   = 0.05
)

// pairGrid is the r grid of the pairing cost when r is unknown and k is
// large.
var pairGrid = []float64{0.95, 0.85, 0.75, 0.65, 0.55, 0.45, 0.35, 0.25, 0.15, 0.05}

// pairColumns chooses the order of v's columns (the UT, or T, columns from
// the set decomposition) that goes with u's (001 Alg. 1 step 6), given the
// weights wu and wv both decompositions estimate (λ⁻²; for a chain, wu are the
// state frequencies). 001 pairs by sorting the weights, which fails when two
// states have close weights, since each list carries its own noise. The
// other evidence is 001 Thm 2: with the right pairing P(r) = (rU +
// (1−r)V)⁺V is stochastic for every r ≥ r* and (P* has a zero entry) not
// below; a wrong one (V = UTΠ) usually turns negative sooner as r falls. The
// caller sorts both lists by weight, so the identity is 001's pairing.
//
// With r given, the cost D(σ) is the projection distance of P(r); the
// pairings with D within pairSlack times the smallest are the candidates (a
// chain whose states nearly swap each step, Family "flip", makes the wrong
// pairing stochastic too) and among them the weights decide: the smallest
// Σⱼ|wuⱼ − wv_σ(j)|. With r unknown, every pairing is scanned (scanR): the
// candidates are those whose P(r) does leave the stochastic matrices (a
// pairing with no zero to cross contradicts 001's assumption on P) at an r
// within 0.05 of the smallest such r, and the weights decide among them; the
// reported cost is then the scanned r. k ≤ exhaustiveStates tries every
// pairing; larger k minimises D (its median over a grid of r when r is
// unknown) by swapping pairs from the identity and keeps the identity unless
// it is more than pairSlack times worse; k > searchStates keeps the identity.
func pairColumns(u, v *mat.Dense, r float64, wu, wv []float64) (perm []int, cost float64) {
	d, k := v.Dims()
	grid := []float64{r}
	if r == 0 {
		grid = pairGrid
	}
	pv := mat.NewDense(d, k, nil)
	arrange := func(p []int) *mat.Dense {
		for j, c := range p {
			for i := range d {
				pv.Set(i, j, v.At(i, c))
			}
		}
		return pv
	}
	dists := make([]float64, len(grid))
	costOf := func(p []int) float64 {
		arrange(p)
		for g, rr := range grid {
			dists[g] = math.Inf(1)
			if pm, err := pOfPair(u, pv, rr); err == nil {
				dists[g] = projectColumns(pm)
			}
		}
		s := slices.Clone(dists)
		slices.Sort(s)
		return s[len(s)/2]
	}
	weightGap := func(p []int) float64 {
		var g float64
		for j, c := range p {
			g += math.Abs(wu[j] - wv[c])
		}
		return g
	}
	ident := make([]int, k)
	for i := range ident {
		ident[i] = i
	}
	if k <= exhaustiveStates {
		type cand struct {
			p       []int
			cost    float64
			tookOff bool
		}
		var all []cand
		cur := slices.Clone(ident)
		var visit func(i int)
		visit = func(i int) {
			if i == k {
				c := cand{p: slices.Clone(cur)}
				if r > 0 {
					c.cost = costOf(cur)
				} else if _, rr, off, err := scanR(u, arrange(cur), pairScanStep); err == nil {
					c.cost, c.tookOff = rr, off
				} else {
					c.cost = math.Inf(1)
				}
				all = append(all, c)
				return
			}
			for j := i; j < k; j++ {
				cur[i], cur[j] = cur[j], cur[i]
				visit(i + 1)
				cur[i], cur[j] = cur[j], cur[i]
			}
		}
		visit(0)
		best := math.Inf(1)
		ok := func(c cand) bool { return r > 0 || c.tookOff }
		for _, c := range all {
			if ok(c) {
				best = min(best, c.cost)
			}
		}
		if math.IsInf(best, 1) && r == 0 {
			// No pairing takes off: fall back to the grid median.
			r, grid = -1, pairGrid
			for i := range all {
				all[i].cost, all[i].tookOff = costOf(all[i].p), true
				best = min(best, all[i].cost)
			}
		}
		gap := math.Inf(1)
		for _, c := range all {
			within := c.cost <= pairSlack*best
			if r == 0 {
				within = c.cost <= best+pairRSlack
			}
			if ok(c) && within {
				if g := weightGap(c.p); g < gap || perm == nil {
					gap, perm, cost = g, c.p, c.cost
				}
			}
		}
		return perm, cost
	}
	perm = slices.Clone(ident)
	cost = costOf(perm)
	if k > searchStates {
		return perm, cost
	}
	identCost := cost
	for improved := true; improved; {
		improved = false
		for i := range k {
			for j := i + 1; j < k; j++ {
				perm[i], perm[j] = perm[j], perm[i]
				if c := costOf(perm); c < cost {
					cost, improved = c, true
				} else {
					perm[i], perm[j] = perm[j], perm[i]
				}
			}
		}
	}
	if identCost <= pairSlack*cost {
		return ident, identCost
	}
	return perm, cost
}

// permuteCols returns the matrix whose column j is column perm[j] of m.
func permuteCols(m *mat.Dense, perm []int) *mat.Dense {
	d, k := m.Dims()
	out := mat.NewDense(d, k, nil)
	for j, c := range perm {
		for i := range d {
			out.Set(i, j, m.At(i, c))
		}
	}
	return out
}
