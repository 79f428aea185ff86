package models

import (
	"fmt"
	"math"
	"math/cmplx"
	"strconv"

	"gonum.org/v1/gonum/mat"
)

// Reported is a fitted model that a report page can show: a Kind's models
// implement it to have their section drawn (models/report).
type Reported interface {
	// Section returns what the page shows of the model.
	Section() Section
}

// Section is a model's part of its report page: charts of its parameters,
// facts about its fit, and notes on what cannot be shown.
type Section struct {
	// K and D are the model's number of components and dimension.
	K, D int
	// Charts are the page's charts, in order.
	Charts []Chart
	// Facts are name–value pairs of how the model was fitted.
	Facts [][2]string
	// Notes say what the section cannot show and why; Warnings are the
	// fit's own doubts, from the model file.
	Notes, Warnings []string
}

// Chart is one chart of a Section: bars of one vector, or a heat map of a
// matrix given by rows.
type Chart struct {
	// Bars draws Values[0] as bars; otherwise Values are a heat map's rows.
	Bars  bool
	Title string
	// Note explains the chart (orientation, what was left out).
	Note                 string
	RowLabels, ColLabels []string
	Values               [][]float64
	// Diverging colours negative values apart from positive ones.
	Diverging bool
}

// Bars adds a bar chart of v, one label per value.
func (s *Section) Bars(title, note string, labels []string, v []float64) {
	s.Charts = append(s.Charts, Chart{Bars: true, Title: title, Note: note, ColLabels: labels, Values: [][]float64{v}})
}

// Heat adds a heat map of rows (each of equal length).
func (s *Section) Heat(title, note string, rowLabels, colLabels []string, rows [][]float64, diverging bool) {
	s.Charts = append(s.Charts, Chart{Title: title, Note: note, RowLabels: rowLabels, ColLabels: colLabels, Values: rows, Diverging: diverging})
}

// Fact adds the fact name: value.
func (s *Section) Fact(name, value string) { s.Facts = append(s.Facts, [2]string{name, value}) }

// Transition adds the heat map of a column-stochastic transition matrix
// (rows[i][j] = Pr(next = i | now = j)) named name and its stationary
// distribution, or a note why there is none.
func (s *Section) Transition(name, title string, rows [][]float64, states []string) {
	s.Heat(title+" "+name, "Column j is the distribution of the next state from state j: "+name+"[i][j] = Pr(next = i | now = j).", states, states, rows, false)
	pi, ok := stationary(rows)
	if !ok {
		s.Notes = append(s.Notes, fmt.Sprintf("%s has no stationary distribution of one sign (not a stochastic matrix, or several closed classes): none is shown.", name))
		return
	}
	s.Bars("Stationary distribution of "+name, "The eigenvector of "+name+" for the eigenvalue nearest 1, scaled to sum to 1.", states, pi)
}

// DenseFit adds what every fit of dense rows records: its input (as far as
// the model file knows it: the file's name is not kept), passes, solver,
// time, and whether its decompositions converged, with their warnings.
func (s *Section) DenseFit(rows int64, cols, passes int, solver string, seconds float64, c Convergence) {
	s.Fact("input", fmt.Sprintf("%d rows of %d columns", rows, cols))
	s.Fact("passes", strconv.Itoa(passes))
	s.Fact("solver", solver)
	s.Fact("seconds", FormatNum(seconds))
	s.Fact("decompositions converged", strconv.FormatBool(c.Converged))
	s.Warnings = append(s.Warnings, c.Warnings...)
}

// Labels returns prefix+"0" … prefix+"n-1".
func Labels(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

// FormatNum writes x with 4 significant digits, or whole when it is an
// integer below 10¹⁵ (counts).
func FormatNum(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatInt(int64(x), 10)
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
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
