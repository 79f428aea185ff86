package markov

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// scanR runs the 001 §3.1 heuristic: P(r) for r falling from 1 in steps of
// step, each projected onto the column-stochastic matrices; r is the last
// grid point before the distance takes off, i.e. before it stays above
// takeOff times the median of the distances seen so far for hold points in a
// row. Requiring a sustained rise steps over the narrow spikes at poles of
// rI + (1−r)T (Thm 2), which in any case lie below the true r.
func scanR(pOf func(r float64) (*mat.Dense, error), step float64) ([]ScanPoint, float64, error) {
	const (
		takeOff = 3.0
		hold    = 3
		minBase = 3 // grid points before a take-off can be declared
	)
	if !(step > 0 && step < 1) {
		return nil, 0, fmt.Errorf("markov: scan step %g must be in (0, 1)", step)
	}
	var scan []ScanPoint
	for i := 0; ; i++ {
		r := 1 - float64(i)*step
		if r < step/2 {
			break
		}
		p, err := pOf(r)
		dist := math.Inf(1)
		if err == nil {
			dist = projectColumns(p)
		}
		scan = append(scan, ScanPoint{R: r, Dist: dist})
	}
	best := scan[len(scan)-1].R
	for j := minBase; j+hold <= len(scan); j++ {
		base := make([]float64, j)
		for i := range j {
			base[i] = scan[i].Dist
		}
		slices.Sort(base)
		floor := base[j/2]
		up := true
		for h := range hold {
			if !(scan[j+h].Dist > takeOff*floor) {
				up = false
				break
			}
		}
		if up {
			best = scan[j-1].R
			break
		}
	}
	return scan, best, nil
}

// Scan runs the r scan on a fitted HMM's U and UT (or a chain's T) without
// another pass, returning the curve and the r it picks.
func Scan(m *Model, step float64) ([]ScanPoint, float64, error) {
	if step == 0 {
		step = 0.01
	}
	var pOf func(r float64) (*mat.Dense, error)
	switch {
	case m.U != nil && m.UT != nil:
		uM, utM := colsMatrix(m.U), colsMatrix(m.UT)
		pOf = func(r float64) (*mat.Dense, error) {
			var a, b, p mat.Dense
			a.Scale(r, uM)
			b.Scale(1-r, utM)
			a.Add(&a, &b)
			return &p, p.Solve(&a, utM)
		}
	case m.T != nil:
		d := len(m.T)
		tm := mat.NewDense(d, d, nil)
		for i, row := range m.T {
			tm.SetRow(i, row)
		}
		pOf = func(r float64) (*mat.Dense, error) {
			var a, p mat.Dense
			a.Scale(1-r, tm)
			for i := range d {
				a.Set(i, i, a.At(i, i)+r)
			}
			return &p, p.Solve(&a, tm)
		}
	default:
		return nil, 0, fmt.Errorf("markov: the model has neither U and UT nor T")
	}
	return scanR(pOf, step)
}
