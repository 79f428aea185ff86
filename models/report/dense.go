package report

import (
	"fmt"
	"math"
	"math/cmplx"
	"strconv"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/models/ica"
	"github.com/streamfit/streamfit/models/markov"
	"github.com/streamfit/streamfit/models/multiview"
	"gonum.org/v1/gonum/mat"
)

// MaxColumns is the most columns (dimensions) a heat map embeds; wider
// matrices show their first MaxColumns columns and say so.
const MaxColumns = 200

// Panel is one chart of the page: a heat map of a matrix or bars of a vector.
type Panel struct {
	// Type is "heatmap" or "bars".
	Type  string `json:"type"`
	Title string `json:"title"`
	// Note explains the chart (orientation, what was left out).
	Note      string   `json:"note,omitempty"`
	RowLabels []string `json:"rows,omitempty"`
	ColLabels []string `json:"cols,omitempty"`
	// Values has one row for bars, else the matrix rows.
	Values [][]Num `json:"values"`
	// Diverging colours negative values apart from positive ones (a signed
	// matrix); otherwise the scale runs from the smallest to the largest value.
	Diverging bool `json:"diverging,omitempty"`
}

// bars is a bar chart of v with one label per value.
func bars(title, note string, labels []string, v []float64) Panel {
	return Panel{Type: "bars", Title: title, Note: note, ColLabels: labels, Values: [][]Num{nums(v)}}
}

// heat is a heat map of rows (each of equal length), cut to MaxColumns
// columns with a note saying so.
func heat(title, note string, rowLabels, colLabels []string, rows [][]float64, diverging bool) Panel {
	p := Panel{Type: "heatmap", Title: title, Note: note, RowLabels: rowLabels, ColLabels: colLabels, Diverging: diverging}
	for _, r := range rows {
		if len(r) > MaxColumns {
			r = r[:MaxColumns]
		}
		p.Values = append(p.Values, nums(r))
	}
	if len(p.ColLabels) > MaxColumns {
		p.ColLabels = p.ColLabels[:MaxColumns]
	}
	if len(rows) > 0 && len(rows[0]) > MaxColumns {
		p.Note = join(p.Note, fmt.Sprintf("The first %d of %d columns are shown.", MaxColumns, len(rows[0])))
	}
	return p
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

// labels returns prefix+"0" … prefix+"n-1".
func labels(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

// transpose returns the columns of rows as rows.
func transpose(rows [][]float64) [][]float64 {
	if len(rows) == 0 {
		return nil
	}
	out := make([][]float64, len(rows[0]))
	for j := range out {
		out[j] = make([]float64, len(rows))
		for i, r := range rows {
			out[j][i] = r[j]
		}
	}
	return out
}

// stationary returns the stationary distribution of a column-stochastic
// k×k matrix given by rows (P[i][j] = Pr(i | j)): the eigenvector of the
// eigenvalue closest to 1, scaled to sum to 1. ok is false when the
// eigenvector is not of one sign (not a stochastic matrix, or a chain with
// several closed classes).
func stationary(rows [][]float64) (pi []float64, ok bool) {
	k := len(rows)
	a := mat.NewDense(k, k, nil)
	for i, r := range rows {
		a.SetRow(i, r)
	}
	var eig mat.Eigen
	if !eig.Factorize(a, mat.EigenRight) {
		return nil, false
	}
	vals := eig.Values(nil)
	best := 0
	for i, v := range vals {
		if cmplx.Abs(v-1) < cmplx.Abs(vals[best]-1) {
			best = i
		}
	}
	if math.Abs(imag(vals[best])) > 1e-9 {
		return nil, false
	}
	var vecs mat.CDense
	eig.VectorsTo(&vecs)
	pi = make([]float64, k)
	var s float64
	for i := range k {
		pi[i] = real(vecs.At(i, best))
		s += pi[i]
	}
	if s == 0 {
		return nil, false
	}
	for i := range pi {
		pi[i] /= s
		if pi[i] < -1e-9 {
			return nil, false
		}
		pi[i] = max(pi[i], 0)
	}
	return pi, true
}

// transition adds the heat map of a column-stochastic transition matrix
// (rows[i][j] = Pr(next = i | now = j)) and its stationary distribution, or
// a note why there is none.
func (d *Data) transition(name, title string, rows [][]float64, states []string) {
	d.Panels = append(d.Panels, heat(title+" "+name, "Column j is the distribution of the next state from state j: "+name+"[i][j] = Pr(next = i | now = j).", states, states, rows, false))
	pi, ok := stationary(rows)
	if !ok {
		d.Notes = append(d.Notes, fmt.Sprintf("%s has no stationary distribution of one sign (not a stochastic matrix, or several closed classes): none is shown.", name))
		return
	}
	d.Panels = append(d.Panels, bars("Stationary distribution of "+name, "The eigenvector of "+name+" for the eigenvalue nearest 1, scaled to sum to 1.", states, pi))
}

// denseFit lists what every dense fit records: its input (as far as the
// model file knows it: the file's name is not kept), passes, solver, time,
// and whether its decompositions converged, with their warnings.
func (d *Data) denseFit(rows int64, cols, passes int, solver string, seconds float64, c models.Convergence) {
	d.prov("input", fmt.Sprintf("%d rows of %d columns", rows, cols))
	d.prov("passes", strconv.Itoa(passes))
	d.prov("solver", solver)
	d.prov("seconds", fmtNum(seconds))
	d.prov("decompositions converged", strconv.FormatBool(c.Converged))
	d.Warnings = append(d.Warnings, c.Warnings...)
}

func gmmPage(d *Data, m *gmm.Model) {
	comp := labels("component ", m.K)
	dims := labels("x", m.D)
	d.Panels = append(d.Panels,
		bars("Component weights", "", comp, m.Weights),
		bars("Component variances σ²", "Spherical: each component's variance per dimension.", comp, m.Variances),
		heat("Component means", "One row per component, one column per dimension.", comp, dims, m.Means, true))
	if s := m.Stats; s != nil {
		d.denseFit(s.Rows, m.D, s.Passes, s.Solver, s.Seconds, s.Convergence)
		d.prov("second moment", s.Method)
		d.prov("differing variances", strconv.FormatBool(s.Differing))
		d.prov("σ² (common)", fmtNum(s.Sigma2))
		d.prov("Σ weights before normalising", fmtNum(s.WeightSum))
	}
}

func icaPage(d *Data, m *ica.Model) {
	comp := labels("source ", m.K)
	dims := labels("x", m.D)
	d.Panels = append(d.Panels,
		bars("Excess kurtosis of each source", "Far from 0: a clearly non-Gaussian source, well identified.", comp, m.Kurtosis),
		heat("Mixing matrix A (columns as rows)", "Row i is the estimated column aᵢ of A (up to sign and scale).", comp, dims, m.Mixing, true))
	if w, err := unmixing(m.Mixing); err == nil {
		d.Panels = append(d.Panels, heat("Unmixing matrix A⁺", "Row i recovers source i from a sample: sᵢ ≈ (A⁺x)ᵢ.", comp, dims, w, true))
	} else {
		d.Notes = append(d.Notes, "The unmixing matrix is not shown: "+err.Error())
	}
	if s := m.Stats; s != nil {
		d.denseFit(s.Rows, m.D, s.Passes, s.Solver, s.Seconds, s.Convergence)
		d.prov("second moment", s.Method)
		d.prov("noise variance σ²", fmtNum(s.Sigma2))
		d.prov("refinement iterations", strconv.Itoa(s.RefineIters))
	}
}

// unmixing returns the k rows of A⁺ for the d×k mixing matrix A whose
// columns are given as rows.
func unmixing(cols [][]float64) ([][]float64, error) {
	k, dim := len(cols), len(cols[0])
	a := mat.NewDense(dim, k, nil)
	for j, c := range cols {
		a.SetCol(j, c)
	}
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		return nil, fmt.Errorf("the SVD of the mixing matrix failed")
	}
	vals := svd.Values(nil)
	if vals[len(vals)-1] <= vals[0]*1e-12 {
		return nil, fmt.Errorf("the mixing matrix is singular (condition number > 1e12)")
	}
	var pinv mat.Dense
	svd.SolveTo(&pinv, eye(dim), len(vals))
	out := make([][]float64, k)
	for i := range k {
		out[i] = mat.Row(nil, i, &pinv)
	}
	return out, nil
}

func eye(n int) *mat.Dense {
	m := mat.NewDense(n, n, nil)
	for i := range n {
		m.Set(i, i, 1)
	}
	return m
}

func hmmPage(d *Data, m *hmm.Model) {
	states := labels("state ", m.K)
	d.transition("T", "Transition matrix", m.T, states)
	d.Panels = append(d.Panels,
		bars("Initial distribution π", "", states, m.Pi),
		heat("Observation means O", "Row j is E[x | state j].", states, labels("x", m.D), m.O, true))
	if s := m.Stats; s != nil {
		d.denseFit(s.Rows, m.D, s.Passes, s.Solver, s.Seconds, s.Convergence)
		d.prov("sequences", strconv.FormatInt(s.Sequences, 10))
		d.prov("ℓ1 moved by simplex projections", fmtNum(s.Projected))
	}
}

func markovPage(d *Data, m *markov.Model) {
	states := labels("state ", m.K)
	d.transition("P", "Transition matrix", m.P, states)
	d.Panels = append(d.Panels, bars("State weights π", "", states, m.Pi))
	if len(m.T) > 0 {
		d.Panels = append(d.Panels, heat("Snapshot transition matrix T", "T[i][j], column-stochastic like P.", states, states, m.T, false))
	}
	if len(m.U) > 0 {
		d.Panels = append(d.Panels, heat("Observation means U", "Row i is the column Uᵢ: the mean observation of state i.", states, labels("x", len(m.U[0])), m.U, true))
	}
	if len(m.Scan) > 0 {
		r, dist := make([]string, len(m.Scan)), make([]float64, len(m.Scan))
		for i, s := range m.Scan {
			r[i], dist[i] = fmtNum(s.R), s.Dist
		}
		d.Panels = append(d.Panels, bars("Snapshot rate scan", "Projection distance of P(r) at each r tried; the fit chose r = "+fmtNum(m.R)+".", r, dist))
	}
	d.prov("α₀", fmtNum(m.Alpha0))
	d.prov("snapshot rate r", fmtNum(m.R))
	if s := m.Stats; s != nil {
		d.denseFit(s.Rows, m.D, s.Passes, s.Solver, s.Seconds, s.Convergence)
		d.prov("sets", strconv.FormatInt(s.Sets, 10))
		d.prov("pairing cost", fmtNum(s.PairingCost))
	}
}

func multiviewPage(d *Data, m *multiview.Model) {
	comp := labels("component ", m.K)
	d.Panels = append(d.Panels, bars("Component weights", "", comp, m.Weights))
	for t, means := range m.Means {
		cols := make([]string, len(m.Views[t]))
		for i, c := range m.Views[t] {
			cols[i] = "x" + strconv.Itoa(c)
		}
		note := "Row i is E[view | component i]."
		if m.Rotated {
			note += " In rotated coordinates."
		}
		d.Panels = append(d.Panels, heat(fmt.Sprintf("Means of view %d", t+1), note, comp, cols, means, true))
	}
	if s := m.Stats; s != nil {
		d.denseFit(s.Rows, m.D, s.Passes, s.Solver, s.Seconds, s.Convergence)
		d.prov("Σ weights before normalising", fmtNum(s.WeightSum))
	}
}
