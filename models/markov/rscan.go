package markov

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Constants of the r scan.
const (
	// negTol is the negative mass (in column-normalised P(r), summed over
	// the matrix) above the noise floor that counts as "P(r) has left the
	// stochastic matrices".
	negTol = 1e-3
	// poleWin is the half-width in r of the window skipped around a pole:
	// there ‖(rI + (1−r)T)⁻¹‖ ≈ 1/((1−λ)|r − r_p|) exceeds about 20.
	poleWin = 0.05
	// floorTop is the top part of the grid (r ≥ 1 − floorTop) whose largest
	// negative mass is taken as the noise floor.
	floorTop = 0.1
)

// scanR runs the r heuristic of 001 §3.1 (docs/MATH.md §2.8) on P(r) = (rU +
// (1−r)V)⁺V for r falling from 1 in steps of step, with U = I and V = T̂ for
// a chain. It records, per r, the paper's projection distance and the
// negative mass of P(r) once its columns are rescaled to sum to 1.
//
// The rule reads the negative mass, not the distance. In the population every
// P(r) has columns summing to 1 and P(r) ≥ 0 exactly for r ≥ r* (Thm 2), so
// only the sign pattern carries r*; the distance also measures how far the
// estimated columns are from summing to 1, an error that varies smoothly with
// r, is the same for every r and dominates at practical sample sizes (the
// distance then falls steadily towards r = 0 and has no visible take-off).
// The negative mass is 0, or a small noise floor where an estimated entry is
// negative already at r = 1, down to r*, and grows linearly below it.
//
// The estimate is the last grid point before the negative mass exceeds
// 2·floor + negTol at two consecutive grid points, where floor is its largest
// value for r ≥ 0.9. Poles r_p = λ/(λ−1), for the negative real eigenvalues λ
// of T̂ = U⁺V, make rU + (1−r)V singular; grid points within poleWin of a
// pole are skipped. Thm 2 puts r* above every pole, so the scan stops at the
// largest one and, when nothing took off above it, returns the first grid
// point above its window with tookOff false.
func scanR(u, v *mat.Dense, step float64) (scan []ScanPoint, best float64, tookOff bool, err error) {
	if !(step > 0 && step < 1) {
		return nil, 0, false, fmt.Errorf("markov: scan step %g must be in (0, 1)", step)
	}
	poles, err := polesOf(u, v)
	if err != nil {
		return nil, 0, false, err
	}
	lowest := 0.0 // Thm 2: r* > max S
	for _, p := range poles {
		lowest = max(lowest, p+poleWin)
	}
	for i := 0; ; i++ {
		r := 1 - float64(i)*step
		if r < step/2 {
			break
		}
		sp := ScanPoint{R: r, Dist: math.Inf(1), Neg: math.Inf(1)}
		for _, p := range poles {
			sp.Pole = sp.Pole || math.Abs(r-p) < poleWin
		}
		if p, err := pOfPair(u, v, r); err == nil {
			sp.Neg = negMass(p)
			sp.Dist = projectColumns(p)
		}
		scan = append(scan, sp)
	}
	var floor float64
	for _, p := range scan {
		if p.R >= 1-floorTop-step/2 && !p.Pole {
			floor = max(floor, p.Neg)
		}
	}
	tau := 2*floor + negTol
	best, above := math.NaN(), 0
	for _, p := range scan {
		if p.Pole {
			continue
		}
		if p.R < lowest {
			break
		}
		if p.Neg > tau {
			if above++; above == 2 {
				tookOff = true
				break
			}
			continue
		}
		above = 0
		best = p.R
	}
	if math.IsNaN(best) {
		best = scan[0].R
	}
	return scan, best, tookOff, nil
}

// polesOf returns the r in (0, 1) where rU + (1−r)V is singular: λ/(λ−1) for
// every eigenvalue λ of T̂ = U⁺V that is real (up to a tenth of its real
// part) and negative.
func polesOf(u, v *mat.Dense) ([]float64, error) {
	var t mat.Dense
	if err := t.Solve(u, v); err != nil {
		return nil, fmt.Errorf("markov: T = U⁺(UT): %w", err)
	}
	var eig mat.Eigen
	if !eig.Factorize(&t, mat.EigenNone) {
		return nil, fmt.Errorf("markov: eigenvalues of T did not converge")
	}
	var poles []float64
	for _, l := range eig.Values(nil) {
		if re := real(l); re < 0 && math.Abs(imag(l)) <= -0.1*re {
			poles = append(poles, re/(re-1))
		}
	}
	return poles, nil
}

// Scan runs the r scan on a fitted HMM's U and UT (or a chain's T) without
// another pass, returning the curve and the r it picks.
func Scan(m *Model, step float64) ([]ScanPoint, float64, error) {
	if step == 0 {
		step = 0.01
	}
	u, v, err := scanPair(m)
	if err != nil {
		return nil, 0, err
	}
	scan, r, _, err := scanR(u, v, step)
	return scan, r, err
}

// scanPair returns the U and V of P(r) = (rU + (1−r)V)⁺V for a model.
func scanPair(m *Model) (u, v *mat.Dense, err error) {
	switch {
	case m.U != nil && m.UT != nil:
		return colsMatrix(m.U), colsMatrix(m.UT), nil
	case m.T != nil:
		d := len(m.T)
		t := mat.NewDense(d, d, nil)
		for i, row := range m.T {
			t.SetRow(i, row)
		}
		return identity(d), t, nil
	}
	return nil, nil, fmt.Errorf("markov: the model has neither U and UT nor T")
}

// negMass is the negative mass Σᵢⱼ max(0, −P̃ᵢⱼ) of P(r) with every column
// rescaled to sum to 1 (+Inf when a column sum is not positive).
func negMass(p *mat.Dense) float64 {
	rows, cols := p.Dims()
	var neg float64
	for j := range cols {
		var s float64
		for i := range rows {
			s += p.At(i, j)
		}
		if !(s > 0) {
			return math.Inf(1)
		}
		for i := range rows {
			neg += max(0, -p.At(i, j)/s)
		}
	}
	return neg
}
