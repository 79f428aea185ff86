package solverbench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/streamfit/streamfit/solver"
)

func gate(t *testing.T) {
	if os.Getenv("STREAMFIT_BENCH") == "" {
		t.Skip("set STREAMFIT_BENCH=1 to run the experiments")
	}
}

// full reports STREAMFIT_BENCH=full (more trials, larger cases).
func full() bool { return os.Getenv("STREAMFIT_BENCH") == "full" }

// envInts parses a comma-separated list from the environment, or returns def.
func envInts(t *testing.T, name string, def []int) []int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, n)
	}
	return out
}

func gauss(r, c int, rng *rand.Rand) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.Set(i, j, rng.NormFloat64())
		}
	}
	return m
}

func unitCols(m *mat.Dense) {
	r, c := m.Dims()
	for j := 0; j < c; j++ {
		n := mat.Norm(m.ColView(j), 2)
		for i := 0; i < r; i++ {
			m.Set(i, j, m.At(i, j)/n)
		}
	}
}

// unitGauss returns k unit columns uniform on the sphere of R^d.
func unitGauss(d, k int, rng *rand.Rand) *mat.Dense {
	m := gauss(d, k, rng)
	unitCols(m)
	return m
}

// ortho returns k orthonormal columns (Q of a Gaussian matrix, which is
// what the SVD of the authors' code gives in distribution).
func ortho(d, k int, rng *rand.Rand) *mat.Dense {
	var qr mat.QR
	qr.Factorize(gauss(d, k, rng))
	var q mat.Dense
	qr.QTo(&q)
	return mat.DenseCopyOf(q.Slice(0, d, 0, k))
}

// Noise conventions of the [003] experiments.
//
//   - frob: π_i = 1 + U(0,1); E a symmetric Gaussian tensor scaled to
//     ‖E‖_F = ε (ε is the noise's Frobenius norm; signal ‖T‖_F ≈ 1.5√k).
//   - paper: the authors' public code: π_i = g_i², g ~ N(0,1); orthogonal
//     case E = ε Σ_j g'_j² v_j⊗3 over a random orthonormal basis (rank d);
//     non-orthogonal case E = ε R with R_ijl i.i.d. N(0,1), symmetrised
//     here (the solvers take symmetric tensors; the antisymmetric part is
//     invisible to every symmetric method), so ‖E‖_F ≈ ε d^{1.5}/√6.
type convention int

const (
	frob convention = iota
	paper
)

func (c convention) String() string { return [...]string{"frob", "paper"}[c] }

// weights draws π by the convention.
func weights(k int, c convention, rng *rand.Rand) []float64 {
	w := make([]float64, k)
	for i := range w {
		if c == paper {
			g := rng.NormFloat64()
			w[i] = g * g
		} else {
			w[i] = 1 + rng.Float64()
		}
	}
	return w
}

// noise returns the noise tensor of the convention (orthoCase picks the
// paper's orthogonal or i.i.d. noise).
func noise(d int, eps float64, c convention, orthoCase bool, rng *rand.Rand) *solver.Sym3 {
	if c == paper && orthoCase {
		e := solver.FromFactors(weights(d, paper, rng), ortho(d, d, rng))
		e.Scale(eps)
		return e
	}
	e := solver.NewSym3(d)
	for i := range e.Data {
		e.Data[i] = rng.NormFloat64()
	}
	if c == paper {
		// An entry with index multiset of m distinct orderings is the mean
		// of m i.i.d. N(0,1): variance 1/m.
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				for l := j; l < d; l++ {
					m := 6.0
					switch {
					case i == j && j == l:
						m = 1
					case i == j || j == l:
						m = 3
					}
					e.Data[e.Index(i, j, l)] *= eps / math.Sqrt(m)
				}
			}
		}
		e.Invalidate()
		return e
	}
	e.Invalidate()
	e.Scale(eps / math.Sqrt(e.FrobeniusSq()))
	return e
}

// meanErr is (1/k)Σ‖u_i − ũ_i‖ after matching and sign ([003] §8); a
// missing factor counts as distance √2.
func meanErr(truth, est *mat.Dense) float64 {
	if est == nil {
		return math.Sqrt2
	}
	_, dist := solver.MatchColumns(truth, est)
	s := 0.0
	for _, x := range dist {
		if math.IsNaN(x) {
			x = math.Sqrt2
		}
		s += x
	}
	return s / float64(len(dist))
}

// tally accumulates one method's error, time and failures over trials.
type tally struct {
	err, sec float64
	n, fails int
	reasons  map[string]int
}

// add records one solve: its error against truth, its time and whether it
// failed (an error, or a result not flagged converged).
func (t *tally) add(truth *mat.Dense, res *solver.Result, err error, sec float64) {
	t.n++
	t.sec += sec
	var est *mat.Dense
	if res != nil {
		est = res.Factors
	}
	t.err += meanErr(truth, est)
	if err != nil {
		t.fails++
		t.note(err.Error())
	} else if res != nil && !res.Converged {
		t.note("not converged: " + res.Reason)
	}
}

func (t *tally) note(s string) {
	if t.reasons == nil {
		t.reasons = map[string]int{}
	}
	if len(s) > 90 {
		s = s[:90]
	}
	t.reasons[s]++
}

func (t *tally) mean() float64 { return t.err / float64(max(t.n, 1)) }

// cell prints the mean error, with the failures when there were any.
func (t *tally) cell() string {
	if t.n == 0 {
		return " — |"
	}
	s := fmt.Sprintf(" %.4f", t.mean())
	if t.fails > 0 {
		s += fmt.Sprintf(" (%d fail)", t.fails)
	}
	return s + " |"
}

// method is a named symmetric solver with fixed options.
type method struct {
	name string
	fn   solver.Func
	opt  func(o solver.Options) solver.Options
}

// named returns a registry solver by name.
func named(t *testing.T, name string) method {
	f, err := solver.ByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return method{name: name, fn: f}
}

// run solves and times one method.
func (m method) run(ctx context.Context, T solver.Tensor, r int, seed uint64) (*solver.Result, error, float64) {
	o := solver.Options{Seed: seed}
	if m.opt != nil {
		o = m.opt(o)
	}
	t0 := time.Now()
	res, err := m.fn(ctx, T, r, o)
	return res, err, time.Since(t0).Seconds()
}

// logReasons prints the distinct failure and non-convergence reasons.
func logReasons(t *testing.T, names []string, ts []*tally) {
	for i, tl := range ts {
		for r, n := range tl.reasons {
			t.Logf("%s: %d× %s", names[i], n, r)
		}
	}
}

// methodNames returns the methods' names, in order.
func methodNames(ms []method) []string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.name
	}
	return names
}

// newTallies returns n empty tallies.
func newTallies(n int) []*tally {
	ts := make([]*tally, n)
	for i := range ts {
		ts[i] = &tally{}
	}
	return ts
}

// tableRow returns a Markdown row: "| label |" and every tally's cell.
func tableRow(label string, ts []*tally) string {
	row := "| " + label + " |"
	for _, tl := range ts {
		row += tl.cell()
	}
	return row
}
