package hmm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// On real sequences the moment fit is a start: Baum–Welch passes refine it
// by likelihood. Each pass is an implicit.Pass over the rows in order (a
// sequence's rows, one id, may span batches; Ordered) with the current
// model as its fixed arrays; a sequence's forward–backward sums are
// committed when it ends, so shards cut at sequence boundaries merge
// exactly. Its statistics:
//
//	pi    (k)    Σ over sequences of the first step's state posteriors
//	trans (k·k)  Σ ξ(i → j), row i the state before
//	emit  (k·d)  Σ γ(j) x
//	ll    (1)    Σ log p(sequence)
//	seqs  (1)    the number of sequences
//
// The emission of a row x in state j is Σₛ xₛ O[j][s]: the probability of
// its symbol for one-hot rows (Config.Discrete). A model with variances
// (Model.Var: Gaussian observations) emits instead the density
// N(x; O[j], Var[j]·I), taken in log space and scaled by its largest
// state per step, so that no sequence underflows; its passes sum too
//
//	occ   (k)    Σ γ(j)
//	sq    (k)    Σ γ(j) ‖x‖²
//
// and the log-likelihood adds back each step's scale. Diagonal states
// (Model.VarDiag: BWConfig.Diag) emit N(x; O[j], diag(VarDiag[j])), and
// their sq is per coordinate:
//
//	sq    (k·d)  Σ γ(j) x²

// BWConfig sets up the Baum–Welch passes.
type BWConfig struct {
	// Passes is the most passes (default DefaultEMPasses); Tol stops them
	// earlier, when a pass raises the log-likelihood per row by less
	// (default DefaultEMTol).
	Passes int
	Tol    float64
	// Floor is the least probability Start gives any start, transition
	// or emission (default 1e-6): a moment fit's zeros would stay zeros
	// under Baum–Welch.
	Floor float64
	// Memory is the most bytes the passes after the first may hold the
	// sequences in instead of reading the source again: one-hot rows as a
	// symbol per row (a byte up to 256 symbols), Gaussian rows whole (8·d
	// bytes per row). Above it every pass reads the source. 0:
	// DefaultBWMemory; negative: every pass reads the source. The model
	// is the same either way.
	Memory int64
	// Workers is the number of goroutines of the passes from memory
	// (default 1); the model does not depend on it.
	Workers int
	// Gaussian makes the rows vectors of a Gaussian per state,
	// N(x; O[j], Var[j]·I), not one-hot symbols: Start keeps the means O
	// as they are, and when the start has no variances, a first pass
	// (GaussianStartPass) gives every state the rows' residual variance
	// about their nearest mean.
	Gaussian bool
	// Diag, with Gaussian, gives each state a variance per coordinate,
	// N(x; O[j], diag(VarDiag[j])) (fit hmm --covariance diag), not one
	// for all its coordinates: its start pass sums the residuals per
	// coordinate, and the M step fits and floors each coordinate's.
	Diag bool `json:",omitempty"`
}

func (c *BWConfig) defaults() {
	if c.Passes == 0 {
		c.Passes = DefaultEMPasses
	}
	if c.Tol == 0 {
		c.Tol = DefaultEMTol
	}
	if c.Floor == 0 {
		c.Floor = 1e-6
	}
	if c.Memory == 0 {
		c.Memory = DefaultBWMemory
	}
	c.Workers = max(c.Workers, 1)
}

// BWRun records the passes of a refinement.
type BWRun struct {
	Passes int `json:"passes"`
	// LogLik is the log-likelihood per row of the model each pass started
	// from (non-decreasing).
	LogLik    []float64 `json:"loglik"`
	Converged bool      `json:"converged"`
	// Tol is the gain per pass below which the passes stopped (BWConfig.Tol).
	Tol float64 `json:"tol,omitempty"`
}

// Refined is an HMM refined by Baum–Welch passes: the Model's fields and
// the record of the passes.
type Refined struct {
	*Model
	BW *BWRun `json:"baum_welch"`
}

// Start returns the moment fit m as a model Baum–Welch passes can start
// from: negative entries of O, T and π set to 0, every entry raised to at
// least cfg.Floor, rows of O, columns of T and π renormalised. What departs
// from a distribution is repaired, not refused. With cfg.Gaussian the rows
// of O are means, kept as they are, and so are m's variances (Var), if it
// has them.
func Start(m *Model, cfg BWConfig) *Model {
	cfg.defaults()
	out := &Model{Model: "hmm", K: m.K, D: m.D, O: make([][]float64, m.K), T: make([][]float64, m.K), Pi: fix(m.Pi, cfg.Floor)}
	for j := range m.K {
		if cfg.Gaussian {
			out.O[j] = append([]float64(nil), m.O[j]...)
		} else {
			out.O[j] = fix(m.O[j], cfg.Floor)
		}
	}
	switch {
	case cfg.Gaussian && m.VarDiag != nil:
		out.VarDiag = make([][]float64, m.K)
		for j := range m.K {
			out.VarDiag[j] = append([]float64(nil), m.VarDiag[j]...)
		}
	case cfg.Gaussian && cfg.Diag && m.Var != nil: // each coordinate starts at the state's variance
		out.VarDiag = make([][]float64, m.K)
		for j := range m.K {
			out.VarDiag[j] = make([]float64, m.D)
			for u := range m.D {
				out.VarDiag[j][u] = m.Var[j]
			}
		}
	case cfg.Gaussian && m.Var != nil:
		out.Var = append([]float64(nil), m.Var...)
	}
	col := make([]float64, m.K)
	for j := range m.K {
		out.T[j] = make([]float64, m.K)
	}
	for j := range m.K { // column j: the distribution of the next state after j
		for i := range m.K {
			col[i] = m.T[i][j]
		}
		c := fix(col, cfg.Floor)
		for i := range m.K {
			out.T[i][j] = c[i]
		}
	}
	return out
}

// fix returns p with negative or NaN entries 0, each at least floor, summing to 1.
func fix(p []float64, floor float64) []float64 {
	out := make([]float64, len(p))
	var s float64
	for i, v := range p {
		if !(v > 0) {
			v = 0
		}
		out[i] = max(v, floor)
		s += out[i]
	}
	for i := range out {
		out[i] /= s
	}
	return out
}

// BWPass returns the pass that sums the forward–backward statistics of m
// over the sequences; phase numbers it, path names the input in errors.
func BWPass(m *Model, phase int, path string) *implicit.Pass {
	p, _ := bwPass(m, phase, path)
	return p
}

// bwPass is BWPass, with the function that makes a worker's
// forward–backward scratch.
func bwPass(m *Model, phase int, path string) (*implicit.Pass, func() *forwardBackward) {
	k, d := m.K, m.D
	a := transitions(m)
	o := make([]float64, 0, k*d)
	for i := range k {
		o = append(o, m.O[i]...)
	}
	pi := append([]float64(nil), m.Pi...)
	alg := "baum-welch"
	sums := []implicit.SumShape{{Name: "pi", Len: k}, {Name: "trans", Len: k * k}, {Name: "emit", Len: k * d}, {Name: "ll", Len: 1}, {Name: "seqs", Len: 1}}
	fixed := []implicit.Fixed{{Name: "pi", Values: pi}, {Name: "a", Values: a}, {Name: "o", Values: o}}
	var v, vd, lnorm []float64
	switch {
	case m.VarDiag != nil:
		alg, vd = "baum-welch-gaussian-diag", make([]float64, 0, k*d)
		for j := range k {
			vd = append(vd, m.VarDiag[j]...)
		}
		lnorm = diagNorm(vd, k, d)
		sums = append(sums, implicit.SumShape{Name: "occ", Len: k}, implicit.SumShape{Name: "sq", Len: k * d})
		fixed = append(fixed, implicit.Fixed{Name: "var_diag", Values: vd})
	case m.Var != nil:
		alg, v = "baum-welch-gaussian", append([]float64(nil), m.Var...)
		lnorm = sphericalNorm(v, d)
		sums = append(sums, implicit.SumShape{Name: "occ", Len: k}, implicit.SumShape{Name: "sq", Len: k})
		fixed = append(fixed, implicit.Fixed{Name: "var", Values: v})
	}
	pr, _ := json.Marshal(struct {
		Algorithm string `json:"algorithm"`
	}{alg})
	newFB := func() *forwardBackward {
		return &forwardBackward{k: k, d: d, pi: pi, a: a, o: o, v: v, vd: vd, lnorm: lnorm, gauss: v != nil || vd != nil, diag: vd != nil, path: path}
	}
	return &implicit.Pass{
		Header:  statsfile.Header{Model: "hmm-bw", Phase: phase, D: d, K: k, Cols: k, Params: pr},
		Sums:    sums,
		Fixed:   fixed,
		Ordered: true,
		Worker:  func() implicit.BatchFunc { return newFB().add },
	}, newFB
}

// GaussianStartPass returns the pass that gives the Gaussian states of m,
// whose means are O and which have no variances yet, their start (phase
// numbers it, path names the input in errors). The moment fit gives no
// variance; this pass sums over the rows
//
//	resid (1)    Σ minⱼ ‖x − O[j]‖²
//	x     (d)    Σ x
//	sq    (1)    Σ ‖x‖²
//	seqs  (1)    the number of sequences
//
// and GaussianStartStep starts every state at the residual variance per
// coordinate about the nearest mean: what the rows' spread about the
// states' means is when each is put in the state it is closest to (the
// hard assignment's estimate, always finite and positive for real data,
// and of the right scale whatever the means). One variance for all states,
// not one per nearest state: a state few rows are nearest to would start
// from an estimate of a handful of rows; the passes then separate them.
func GaussianStartPass(m *Model, phase int, path string) *implicit.Pass {
	return gaussianStartPass(m, phase, path, false)
}

// GaussianDiagStartPass is GaussianStartPass for diagonal states
// (BWConfig.Diag): its sums are per coordinate,
//
//	resid_diag (d)  Σ (x − O[j])², j the nearest mean (the first of ties)
//	x          (d)  Σ x
//	sq_diag    (d)  Σ x²
//	seqs       (1)  the number of sequences
//
// and GaussianStartStep starts every state's variance of coordinate c at
// the rows' residual variance of c about their nearest mean, at least
// that coordinate's floor (diagFloor).
func GaussianDiagStartPass(m *Model, phase int, path string) *implicit.Pass {
	return gaussianStartPass(m, phase, path, true)
}

// gaussianStartPass is GaussianStartPass, or with diag GaussianDiagStartPass.
func gaussianStartPass(m *Model, phase int, path string, diag bool) *implicit.Pass {
	k, d := m.K, m.D
	o := make([]float64, 0, k*d)
	for i := range k {
		o = append(o, m.O[i]...)
	}
	alg, sums := "baum-welch-gaussian-start", []implicit.SumShape{{Name: "resid", Len: 1}, {Name: "x", Len: d}, {Name: "sq", Len: 1}, {Name: "seqs", Len: 1}}
	if diag {
		alg, sums = "baum-welch-gaussian-diag-start", []implicit.SumShape{{Name: "resid_diag", Len: d}, {Name: "x", Len: d}, {Name: "sq_diag", Len: d}, {Name: "seqs", Len: 1}}
	}
	pr, _ := json.Marshal(struct {
		Algorithm string `json:"algorithm"`
	}{alg})
	return &implicit.Pass{
		Header:  statsfile.Header{Model: "hmm-bw", Phase: phase, D: d, K: k, Cols: k, Params: pr},
		Sums:    sums,
		Fixed:   []implicit.Fixed{{Name: "o", Values: o}},
		Ordered: true,
		Worker: func() implicit.BatchFunc {
			return (&forwardBackward{k: k, d: d, o: o, gauss: true, diag: diag, startVar: true, path: path}).add
		},
	}
}

// GaussianStartStep returns m with every state's variance the residual
// variance per coordinate about the nearest mean, from the merged
// statistics st of its GaussianStartPass (at least the floor of
// varianceFloor); from those of its GaussianDiagStartPass, every state's
// variances (VarDiag) the residual variance of each coordinate (at least
// diagFloor's).
func GaussianStartStep(m *Model, st *implicit.DenseStats) (*Model, error) {
	d := m.D
	if st.Sum("resid_diag") != nil {
		return gaussianDiagStartStep(m, st)
	}
	resid, x, sq, seqs := st.Sum("resid"), st.Sum("x"), st.Sum("sq"), st.Sum("seqs")
	if len(resid) != 1 || len(x) != d || len(sq) != 1 || seqs == nil {
		return nil, errors.New("hmm: not the statistics of the Gaussian start pass of this model")
	}
	if st.Rows == 0 || seqs[0] == 0 {
		return nil, errors.New("hmm: no sequences")
	}
	n := float64(st.Rows)
	v := max(resid[0]/(n*float64(d)), varianceFloor(x, sq[0], n, d))
	out := copyParams(m)
	out.Var = make([]float64, m.K)
	for j := range out.Var {
		out.Var[j] = v
	}
	return out, nil
}

// gaussianDiagStartStep is GaussianStartStep from the statistics of a
// GaussianDiagStartPass.
func gaussianDiagStartStep(m *Model, st *implicit.DenseStats) (*Model, error) {
	d := m.D
	resid, x, sq, seqs := st.Sum("resid_diag"), st.Sum("x"), st.Sum("sq_diag"), st.Sum("seqs")
	if len(resid) != d || len(x) != d || len(sq) != d || seqs == nil {
		return nil, errors.New("hmm: not the statistics of the diagonal Gaussian start pass of this model")
	}
	if st.Rows == 0 || seqs[0] == 0 {
		return nil, errors.New("hmm: no sequences")
	}
	n := float64(st.Rows)
	floor := diagFloor(x, sq, n)
	out := copyParams(m)
	out.VarDiag = make([][]float64, m.K)
	for j := range m.K {
		out.VarDiag[j] = make([]float64, d)
		for u := range d {
			out.VarDiag[j][u] = max(resid[u]/n, floor[u])
		}
	}
	return out, nil
}

// copyParams returns a copy of m's means, transitions and start, without
// variances or a fit record.
func copyParams(m *Model) *Model {
	out := *m
	out.O = make([][]float64, m.K)
	for j := range m.K {
		out.O[j] = append([]float64(nil), m.O[j]...)
	}
	out.T = make([][]float64, m.K)
	for j := range m.K {
		out.T[j] = append([]float64(nil), m.T[j]...)
	}
	out.Pi = append([]float64(nil), m.Pi...)
	out.Var, out.VarDiag, out.Fit = nil, nil, nil
	return &out
}

// varianceFloor is the least variance a Gaussian state may have: a
// millionth of the rows' mean variance per coordinate (from their sum x
// and sum of squares sq over n rows of d columns), and above 0. The
// likelihood of a state whose variance is free has no maximum: a state
// that shrinks onto one row, or onto rows repeated exactly, gains without
// bound, and its variance would run to 0 (and the log-likelihood to +∞).
// The floor stops that; relative to the data's spread it does not depend
// on the units of x, and six orders of magnitude below it no state that
// describes more than a row or two ever meets it. It is a property of the
// data alone, the same every pass, so the passes stay monotone.
func varianceFloor(x []float64, sq, n float64, d int) float64 {
	var mm float64
	for _, v := range x {
		mm += (v / n) * (v / n)
	}
	return max(1e-6*(sq/n-mm)/float64(d), 1e-300)
}

// diagFloor is varianceFloor per coordinate, for diagonal states: the
// least variance of coordinate c is a millionth of the rows' variance of
// c (from their sums x and sums of squares sq over n rows), and above 0.
// The coordinates of real features differ in scale by orders of
// magnitude, so each is floored relative to its own spread: one floor
// from the mean variance would be no floor for the wide ones and could
// exceed the narrow ones' true variance.
func diagFloor(x, sq []float64, n float64) []float64 {
	out := make([]float64, len(x))
	for u := range x {
		m := x[u] / n
		out[u] = max(1e-6*(sq[u]/n-m*m), 1e-300)
	}
	return out
}

// gaussEmit sets b[j] to the density of row x in state j (means o, k×d
// row-major) divided by the largest of them, and returns the largest's
// log: N(o_j, v[j]·I), or with vd set N(o_j, diag(vd[j·d:])), lnorm holding
// the states' log normalisers (sphericalNorm(v) or diagNorm(vd), once a
// pass rather than per row). The Baum–Welch passes and Posteriors share
// it, so they score rows alike.
func gaussEmit(x, o, v, vd, lnorm, b []float64) float64 {
	d := len(x)
	top := math.Inf(-1)
	for j := range b {
		oj := o[j*d : (j+1)*d]
		if vd != nil { // Σ_c −(x_c − μ_c)²/(2σ²_c) − ½ log(2πσ²_c)
			var q float64
			for u, xu := range x {
				e := xu - oj[u]
				q += e * e / (2 * vd[j*d+u])
			}
			b[j] = lnorm[j] - q
		} else { // −‖x − μ_j‖²/(2v_j) − (d/2) log(2π v_j)
			var dist float64
			for u, xu := range x {
				e := xu - oj[u]
				dist += e * e
			}
			b[j] = -dist/(2*v[j]) + lnorm[j]
		}
		top = max(top, b[j])
	}
	if math.IsInf(top, 0) || math.IsNaN(top) {
		return top
	}
	for j := range b {
		b[j] = math.Exp(b[j] - top)
	}
	return top
}

// sphericalNorm returns, for the variances v of spherical states in d
// dimensions, each state's log normaliser −(d/2)·log(2π v[j]).
func sphericalNorm(v []float64, d int) []float64 {
	out := make([]float64, len(v))
	for j, vj := range v {
		out[j] = -(0.5 * float64(d) * math.Log(2*math.Pi*vj))
	}
	return out
}

// diagNorm returns, for the k×d variances vd of diagonal states, each
// state's log normaliser −½ Σ_c log(2π vd[j,c]).
func diagNorm(vd []float64, k, d int) []float64 {
	out := make([]float64, k)
	for j := range k {
		var s float64
		for _, v := range vd[j*d : (j+1)*d] {
			s += math.Log(2 * math.Pi * v)
		}
		out[j] = -0.5 * s
	}
	return out
}

// forwardBackward holds the rows of the sequence being read and the
// scratch of its forward–backward sums. The rows are kept as their
// nonzero entries (one per row for one-hot symbols), so the emission and
// γ sums cost the nonzeros, not k·d per row; the sums skip the zeros in
// the same order as over the full rows, so the statistics are the same.
//
// Gaussian rows (gauss) are kept whole, in rows; startVar makes it sum
// the Gaussian start pass's residuals instead (GaussianStartPass).
type forwardBackward struct {
	k, d      int
	pi, a, o  []float64
	v         []float64 // the states' variances, when gauss
	vd        []float64 // or, when diag, k×d: a variance per state and coordinate
	lnorm     []float64 // the states' log normalisers: sphericalNorm(v) or diagNorm(vd)
	gauss     bool
	diag      bool
	startVar  bool
	rows      []float64
	path      string
	id        int64
	start     int64   // the source row of the sequence's first step
	idx       []int32 // column of each nonzero, row after row
	val       []float64
	end       []int // end[t]: the end of row t's nonzeros in idx and val
	b, al, be []float64
	c         []float64
}

// add takes one batch (nil at the end of the pass): each sequence that
// ends is summed into out and committed.
func (f *forwardBackward) add(b *stream.Dense, out [][]float64, commit func() error) error {
	if b == nil {
		return f.flush(out, commit)
	}
	if len(b.Group) != b.Rows {
		return stream.Errorf(f.path, 0, b.Start, "", stream.ErrSchema, "Baum–Welch passes need the sequence id of every row")
	}
	if b.Cols != f.d {
		return stream.Errorf(f.path, 0, b.Start, "", stream.ErrValue, "rows have %d columns, the model %d", b.Cols, f.d)
	}
	for i := range b.Rows {
		if id := b.Group[i]; len(f.end) > 0 && id != f.id {
			if err := f.flush(out, commit); err != nil {
				return err
			}
		}
		if len(f.end) == 0 {
			f.id, f.start = b.Group[i], b.Start+int64(i)
		}
		if f.gauss {
			f.rows = append(f.rows, b.Row(i)...)
			f.end = append(f.end, len(f.end)+1)
			continue
		}
		for u, v := range b.Row(i) {
			if v != 0 {
				f.idx, f.val = append(f.idx, int32(u)), append(f.val, v)
			}
		}
		f.end = append(f.end, len(f.idx))
	}
	return nil
}

// flush sums the forward–backward statistics of the sequence held and
// commits them.
func (f *forwardBackward) flush(out [][]float64, commit func() error) error {
	n := len(f.end)
	if n == 0 {
		return nil
	}
	if f.gauss {
		return f.flushGaussian(out, commit)
	}
	k, d := f.k, f.d
	f.b, f.al, f.be, f.c = growTo(f.b, n*k), growTo(f.al, n*k), growTo(f.be, n*k), growTo(f.c, n)
	// Emissions b[t,j] = Σₛ x[t,s] O[j,s].
	lo := 0
	for t, hi := range f.end {
		idx, val := f.idx[lo:hi], f.val[lo:hi]
		for j := range k {
			var s float64
			for p, u := range idx {
				s += val[p] * f.o[j*d+int(u)]
			}
			f.b[t*k+j] = s
		}
		lo = hi
	}
	if err := f.forwardBackward(n); err != nil {
		return err
	}
	var ll float64
	for _, v := range f.c[:n] {
		ll += math.Log(v)
	}
	// γ, ξ and the sums.
	lo = 0
	for t, hi := range f.end {
		idx, val := f.idx[lo:hi], f.val[lo:hi]
		lo = hi
		for j := range k {
			g := f.al[t*k+j] * f.be[t*k+j]
			if t == 0 {
				out[0][j] += g
			}
			for p, u := range idx {
				out[2][j*d+int(u)] += g * val[p]
			}
		}
		if t+1 < n {
			f.addTransitions(out[1], t)
		}
	}
	out[3][0] += ll
	out[4][0]++
	f.idx, f.val, f.end = f.idx[:0], f.val[:0], f.end[:0]
	return commit()
}

// forwardBackward runs the scaled recursions over the n steps whose
// emissions f.b holds, naming the step a sequence of probability 0 stops
// at.
func (f *forwardBackward) forwardBackward(n int) error {
	if t := scaledForwardBackward(f.pi, f.a, f.b, n, f.k, f.al, f.be, f.c); t >= 0 {
		return stream.Errorf(f.path, 0, f.start+int64(t), "", stream.ErrValue, "sequence %d has probability 0 under the model at this step (start from a model whose probabilities are positive: Start)", f.id)
	}
	return nil
}

// addTransitions adds to trans (k×k) the expected transitions ξ from step t
// to t+1 of the scaled recursions.
func (f *forwardBackward) addTransitions(trans []float64, t int) {
	k := f.k
	for i := range k {
		ai := f.al[t*k+i] / f.c[t+1]
		for j := range k {
			trans[i*k+j] += ai * f.a[i*k+j] * f.b[(t+1)*k+j] * f.be[(t+1)*k+j]
		}
	}
}

// flushGaussian is flush for Gaussian rows: the emissions in log space,
// each step's scaled by its largest state (the scale added back to the
// log-likelihood), then the sums of γ, γx and γ‖x‖² (or, with startVar,
// the start pass's sums).
func (f *forwardBackward) flushGaussian(out [][]float64, commit func() error) error {
	n := len(f.end)
	k, d := f.k, f.d
	if f.startVar {
		for t := range n {
			x := f.rows[t*d : (t+1)*d]
			best := math.Inf(1)
			var sq float64
			near := 0
			for j := range k {
				var dist float64
				for u, xu := range x {
					e := xu - f.o[j*d+u]
					dist += e * e
				}
				if dist < best {
					near = j
				}
				best = min(best, dist)
			}
			if f.diag {
				for u, xu := range x {
					e := xu - f.o[near*d+u]
					out[0][u] += e * e
					out[1][u] += xu
					out[2][u] += xu * xu
				}
				continue
			}
			for u, xu := range x {
				out[1][u] += xu
				sq += xu * xu
			}
			out[0][0] += best
			out[2][0] += sq
		}
		out[3][0]++
		f.rows, f.end = f.rows[:0], f.end[:0]
		return commit()
	}
	f.b, f.al, f.be, f.c = growTo(f.b, n*k), growTo(f.al, n*k), growTo(f.be, n*k), growTo(f.c, n)
	var shift float64
	for t := range n {
		top := gaussEmit(f.rows[t*d:(t+1)*d], f.o, f.v, f.vd, f.lnorm, f.b[t*k:(t+1)*k])
		if math.IsInf(top, 0) || math.IsNaN(top) {
			return stream.Errorf(f.path, 0, f.start+int64(t), "", stream.ErrValue, "sequence %d: the row has no finite density under the model", f.id)
		}
		shift += top
	}
	if err := f.forwardBackward(n); err != nil {
		return err
	}
	ll := shift
	for _, v := range f.c[:n] {
		ll += math.Log(v)
	}
	for t := range n {
		x := f.rows[t*d : (t+1)*d]
		var sq float64
		for _, xu := range x {
			sq += xu * xu
		}
		for j := range k {
			g := f.al[t*k+j] * f.be[t*k+j]
			if t == 0 {
				out[0][j] += g
			}
			out[5][j] += g
			em := out[2][j*d : (j+1)*d]
			if f.diag {
				sqj := out[6][j*d : (j+1)*d]
				for u, xu := range x {
					em[u] += g * xu
					sqj[u] += g * xu * xu
				}
				continue
			}
			out[6][j] += g * sq
			for u, xu := range x {
				em[u] += g * xu
			}
		}
		if t+1 < n {
			f.addTransitions(out[1], t)
		}
	}
	out[3][0] += ll
	out[4][0]++
	f.rows, f.end = f.rows[:0], f.end[:0]
	return commit()
}

// BWStep returns the model of the Baum–Welch M step from the merged
// statistics st of a pass over m, and the log-likelihood per row of m.
func BWStep(m *Model, st *implicit.DenseStats) (*Model, float64, error) {
	k, d := m.K, m.D
	pi, tr, em, ll, seqs := st.Sum("pi"), st.Sum("trans"), st.Sum("emit"), st.Sum("ll"), st.Sum("seqs")
	if len(pi) != k || len(tr) != k*k || len(em) != k*d || ll == nil || seqs == nil {
		return nil, 0, errors.New("hmm: not the statistics of a Baum–Welch pass of this model")
	}
	if st.Rows == 0 || seqs[0] == 0 {
		return nil, 0, errors.New("hmm: no sequences")
	}
	out := &Model{Model: "hmm", K: k, D: d, O: make([][]float64, k), T: make([][]float64, k), Pi: make([]float64, k)}
	for j := range k {
		out.Pi[j] = pi[j] / seqs[0]
		out.T[j] = make([]float64, k)
	}
	for i := range k {
		var s float64
		for j := range k {
			s += tr[i*k+j]
		}
		for j := range k {
			if s > 0 {
				out.T[j][i] = tr[i*k+j] / s
			} else {
				out.T[j][i] = m.T[j][i] // a state never left keeps its transitions
			}
		}
	}
	if m.gaussian() {
		if err := gaussianStep(m, out, st); err != nil {
			return nil, 0, err
		}
		return out, ll[0] / float64(st.Rows), nil
	}
	for j := range k {
		var s float64
		for u := range d {
			s += em[j*d+u]
		}
		out.O[j] = make([]float64, d)
		for u := range d {
			if s > 0 {
				out.O[j][u] = em[j*d+u] / s
			} else {
				out.O[j][u] = m.O[j][u]
			}
		}
	}
	return out, ll[0] / float64(st.Rows), nil
}

// gaussianStep sets out's means and variances, the M step of the Gaussian
// states of m from the statistics st: μⱼ = Σγx/Σγ, σ²ⱼ = (Σγ‖x‖² −
// ‖μⱼ‖²Σγ)/(d Σγ), at least varianceFloor of the rows; a state no row
// visits keeps its mean and variance.
func gaussianStep(m, out *Model, st *implicit.DenseStats) error {
	if m.VarDiag != nil {
		return gaussianDiagStep(m, out, st)
	}
	k, d := m.K, m.D
	em, occ, sq := st.Sum("emit"), st.Sum("occ"), st.Sum("sq")
	if len(occ) != k || len(sq) != k {
		return errors.New("hmm: not the statistics of a Gaussian Baum–Welch pass of this model")
	}
	n := float64(st.Rows)
	x := make([]float64, d)
	var sqAll float64
	for j := range k {
		for u := range d {
			x[u] += em[j*d+u]
		}
		sqAll += sq[j]
	}
	floor := varianceFloor(x, sqAll, n, d)
	out.Var = make([]float64, k)
	for j := range k {
		out.O[j] = make([]float64, d)
		if !(occ[j] > 0) {
			copy(out.O[j], m.O[j])
			out.Var[j] = m.Var[j]
			continue
		}
		var mm float64
		for u := range d {
			out.O[j][u] = em[j*d+u] / occ[j]
			mm += out.O[j][u] * out.O[j][u]
		}
		out.Var[j] = max((sq[j]-mm*occ[j])/(float64(d)*occ[j]), floor)
	}
	return nil
}

// gaussianDiagStep is gaussianStep of diagonal states: μⱼ = Σγx/Σγ and
// per coordinate σ²ⱼ,c = (Σγx_c² − μⱼ,c²Σγ)/Σγ, at least diagFloor's
// floor of c; a state no row visits keeps its mean and variances.
func gaussianDiagStep(m, out *Model, st *implicit.DenseStats) error {
	k, d := m.K, m.D
	em, occ, sq := st.Sum("emit"), st.Sum("occ"), st.Sum("sq")
	if len(occ) != k || len(sq) != k*d {
		return errors.New("hmm: not the statistics of a diagonal Gaussian Baum–Welch pass of this model")
	}
	n := float64(st.Rows)
	x, sqAll := make([]float64, d), make([]float64, d)
	for j := range k {
		for u := range d {
			x[u] += em[j*d+u]
			sqAll[u] += sq[j*d+u]
		}
	}
	floor := diagFloor(x, sqAll, n)
	out.VarDiag = make([][]float64, k)
	for j := range k {
		out.O[j] = make([]float64, d)
		out.VarDiag[j] = make([]float64, d)
		if !(occ[j] > 0) {
			copy(out.O[j], m.O[j])
			copy(out.VarDiag[j], m.VarDiag[j])
			continue
		}
		for u := range d {
			mu := em[j*d+u] / occ[j]
			out.O[j][u] = mu
			out.VarDiag[j][u] = max((sq[j*d+u]-mu*mu*occ[j])/occ[j], floor[u])
		}
	}
	return nil
}

// Refine runs Baum–Welch passes over src (rows in sequence order, with
// their sequence ids) from start, until a pass gains less than cfg.Tol in
// log-likelihood per row or cfg.Passes passes. With cfg.Gaussian, a start
// without variances has them from a first pass (GaussianStartPass, with
// cfg.Diag GaussianDiagStartPass), not counted in cfg.Passes. The first pass reads src and keeps the sequences
// in memory within cfg.Memory; the passes after it read them there (else
// src again). Each pass is handed to the log ctx carries
// (models.WithPassLog).
func Refine(ctx context.Context, src stream.DenseSource, start *Model, cfg BWConfig) (*Refined, error) {
	cfg.defaults()
	if src.Info().Cols != start.D {
		return nil, fmt.Errorf("hmm: the rows have %d columns, the model %d", src.Info().Cols, start.D)
	}
	m, run := start, &BWRun{Tol: cfg.Tol}
	phase := 0 // the passes before the first Baum–Welch pass
	var mem *seqMemory
	if cfg.Diag && (!cfg.Gaussian || m.Var != nil) {
		return nil, errors.New("hmm: Baum–Welch of diagonal Gaussian states (BWConfig.Diag) needs Gaussian observations and a start without spherical variances (Start converts them)")
	}
	if !cfg.Diag && m.VarDiag != nil {
		return nil, errors.New("hmm: a start of diagonal Gaussian states needs BWConfig.Diag")
	}
	if cfg.Gaussian && !m.gaussian() {
		t0 := time.Now()
		keep := newSeqMemory(start.D, cfg.Memory, src.Info().Rows, true)
		rows := src.Rows
		if keep != nil {
			rows = keep.tap(src.Rows)
		}
		st, err := gaussianStartPass(m, 1, src.Info().Path, cfg.Diag).Run(ctx, rows, 1)
		if err != nil {
			return nil, err
		}
		if keep != nil && !keep.failed && int64(keep.rows()) == st.Rows {
			mem = keep
		}
		if m, err = GaussianStartStep(m, st); err != nil {
			return nil, err
		}
		models.LogPass(ctx, models.PassDone{Pass: 1, Stage: "baum-welch start", Rows: st.Rows, Took: time.Since(t0)})
		phase = 1
	}
	if cfg.Gaussian != m.gaussian() {
		return nil, errors.New("hmm: Baum–Welch of Gaussian observations (BWConfig.Gaussian) needs a model of Gaussian states, one-hot observations one without variances")
	}
	for p := range cfg.Passes {
		t0 := time.Now()
		pass, newFB := bwPass(m, phase+p+1, src.Info().Path)
		var (
			st  *implicit.DenseStats
			err error
		)
		var keep *seqMemory
		if p == 0 && cfg.Passes > 1 && mem == nil {
			keep = newSeqMemory(start.D, cfg.Memory, src.Info().Rows, cfg.Gaussian)
		}
		switch {
		case mem != nil:
			st, err = mem.run(ctx, pass, newFB, cfg.Workers)
		case keep != nil:
			st, err = pass.Run(ctx, keep.tap(src.Rows), 1)
			if err == nil && !keep.failed && int64(keep.rows()) == st.Rows {
				mem = keep
			}
		default:
			st, err = pass.Run(ctx, src.Rows, 1)
		}
		if err != nil {
			return nil, err
		}
		next, ll, err := BWStep(m, st)
		if err != nil {
			return nil, err
		}
		m = next
		models.LogPass(ctx, models.PassDone{Pass: phase + p + 1, Stage: "baum-welch", Rows: st.Rows, Took: time.Since(t0), LogLik: ll})
		if run.record(ll, cfg.Tol) {
			break
		}
	}
	return &Refined{Model: m, BW: run}, nil
}

// record notes a pass from a model of log-likelihood ll per row, and
// reports whether the passes stop there: the pass gained less than tol
// over the one before.
func (r *BWRun) record(ll, tol float64) bool {
	r.Passes++
	r.LogLik = append(r.LogLik, ll)
	if n := len(r.LogLik); n > 1 && r.LogLik[n-1]-r.LogLik[n-2] < tol {
		r.Converged = true
	}
	return r.Converged
}
