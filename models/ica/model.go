package ica

import (
	"fmt"
	"math"

	"github.com/streamfit/streamfit/models"
)

// Model is a fitted (or true) ICA model: the generator (stream/synth) writes
// its truth files as this type.
type Model struct {
	Model string `json:"model"` // "ica"
	K     int    `json:"k"`
	D     int    `json:"d"`
	// Mixing has K rows, the estimated columns of A (up to sign and scale; for
	// unit-variance sources the scale is A's).
	Mixing [][]float64 `json:"mixing"`
	// Kurtosis are the excess kurtoses κᵢ = E[hᵢ⁴] − 3 of the unit-variance sources.
	Kurtosis []float64 `json:"kurtosis"`
	// Mean is the data mean removed before the fit (nil in truth files).
	Mean []float64  `json:"mean,omitempty"`
	Fit  *FitRecord `json:"stats,omitempty"`
}

// FitRecord describes a fit: what it saw and did.
type FitRecord struct {
	Rows   int64   `json:"rows"`
	Passes int     `json:"passes"`
	Method string  `json:"method"` // "exact" or "sketch"
	Solver string  `json:"solver"`
	Sigma2 float64 `json:"sigma2"` // estimated noise variance
	// Whitening are the k eigenvalues of C − σ²I used to whiten.
	Whitening []float64 `json:"whitening"`
	// Lambda are the third-order eigenvalues |κᵢ bᵢᵀv| from the solver.
	Lambda []float64 `json:"lambda"`
	// Contrast is what the polishing steps maximised (Config.Contrast).
	Contrast string `json:"contrast,omitempty"`
	// RefineIters is the number of polishing steps taken.
	RefineIters int     `json:"refine_iters"`
	Seconds     float64 `json:"seconds"`
	// Convergence says whether the tensor decomposition converged.
	models.Convergence
}

// Write stores the model as indented JSON, atomically.
func (m *Model) Write(path string) error { return models.WriteJSON(path, m) }

// Read loads a model or an ICA truth file and checks its shape.
func Read(path string) (*Model, error) {
	return models.ReadJSON(path, "an ica model", (*Model).validate)
}

func (m *Model) dims() (k, d int) { return m.K, m.D }

func (m *Model) validate() error {
	if len(m.Mixing) != m.K || len(m.Kurtosis) != m.K {
		return fmt.Errorf("ica model: k=%d but %d mixing columns and %d kurtoses", m.K, len(m.Mixing), len(m.Kurtosis))
	}
	for i, a := range m.Mixing {
		if len(a) != m.D {
			return fmt.Errorf("ica model: mixing column %d has %d entries, d=%d", i, len(a), m.D)
		}
	}
	return nil
}

// Metrics compare a fitted mixing matrix with the truth after normalising
// every column to unit norm, matching columns (Hungarian, on 1 − |cos|) and
// aligning signs: the identifiable part of A.
type Metrics struct {
	// Mixing is ‖Â − A‖₂/‖A‖₂ on the normalised, matched, sign-aligned columns.
	Mixing float64 `json:"mixing_rel_err"`
	// MaxSine is the largest sine of the angle between a true column and its match.
	MaxSine float64 `json:"max_sine"`
	// Kurtosis is max |κ̂ᵢ − κᵢ|.
	Kurtosis float64 `json:"kurtosis_max_abs_err"`
	// Perm maps truth column i to fitted column Perm[i].
	Perm []int `json:"perm"`
}

// Eval compares est with truth.
func Eval(est, truth *Model) (*Metrics, error) {
	if err := models.CheckPair("ica", est, truth, (*Model).validate, (*Model).dims); err != nil {
		return nil, err
	}
	k, d := truth.K, truth.D
	a, b := unitCols(truth.Mixing), unitCols(est.Mixing)
	cost := make([][]float64, k)
	for i := range k {
		cost[i] = make([]float64, k)
		for j := range k {
			cost[i][j] = 1 - math.Abs(dot(a[i], b[j]))
		}
	}
	perm, err := models.Assign(cost)
	if err != nil {
		return nil, err
	}
	m := &Metrics{Perm: perm}
	for i, j := range perm {
		c := dot(a[i], b[j])
		if c < 0 {
			for l := range d {
				b[j][l] = -b[j][l] // align the sign of the match
			}
		}
		m.MaxSine = math.Max(m.MaxSine, math.Sqrt(math.Max(0, 1-c*c)))
		m.Kurtosis = math.Max(m.Kurtosis, math.Abs(est.Kurtosis[j]-truth.Kurtosis[i]))
	}
	m.Mixing = models.RelErrCols(b, a, perm)
	return m, nil
}

func unitCols(cols [][]float64) [][]float64 {
	out := make([][]float64, len(cols))
	for i, c := range cols {
		n := math.Sqrt(dot(c, c))
		out[i] = make([]float64, len(c))
		for j, v := range c {
			if n > 0 {
				out[i][j] = v / n
			}
		}
	}
	return out
}

func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// seconds is where a fit records its wall time.
func (m *Model) seconds() *float64 { return &m.Fit.Seconds }
