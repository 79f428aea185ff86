package hmm

import (
	"fmt"
	"math"

	"github.com/streamfit/streamfit/models"
)

// Model is a fitted (or true) HMM: the generator (stream/synth) writes its
// truth files as this type.
type Model struct {
	Model string `json:"model"` // "hmm"
	K     int    `json:"k"`
	D     int    `json:"d"`
	// O has K rows: row j is E[x | y = j].
	O [][]float64 `json:"O"`
	// T[i][j] = Pr(y_{t+1} = i | y_t = j).
	T [][]float64 `json:"T"`
	// Pi is the distribution of y₁ (of the window starts with Config.Windows).
	Pi []float64 `json:"pi"`
	// Var, of Gaussian observations refined by Baum–Welch, is each
	// state's variance per coordinate: x | y = j is N(O[j], Var[j]·I).
	// nil for one-hot observations and for the moment fit, which gives
	// no variance (Posteriors then estimates one for all states).
	Var []float64 `json:"var,omitempty"`
	// VarDiag, of Gaussian observations refined with a variance per state
	// and coordinate (BWConfig.Diag, fit hmm --covariance diag), has K
	// rows of the D variances of each state: x | y = j is
	// N(O[j], diag(VarDiag[j])). A model has Var or VarDiag, never both;
	// spherical models, and every file written before diagonal states,
	// have no "var_diag", so "var" is always one variance per state.
	VarDiag [][]float64 `json:"var_diag,omitempty"`
	Fit     *FitRecord  `json:"stats,omitempty"`
}

// gaussian reports whether m has Gaussian states with their own
// variances, spherical (Var) or diagonal (VarDiag).
func (m *Model) gaussian() bool { return m.Var != nil || m.VarDiag != nil }

// FitRecord describes a fit: what it saw and did.
type FitRecord struct {
	Rows      int64     `json:"rows"`
	Sequences int64     `json:"sequences"`
	Triples   int64     `json:"triples"`
	Passes    int       `json:"passes"`
	Solver    string    `json:"solver"`
	Whitening []float64 `json:"whitening"`
	Lambda    []float64 `json:"lambda"`
	// W is Tπ, the distribution of the second state, from the tensor eigenvalues.
	W []float64 `json:"w"`
	// Projected is the total ℓ1 distance moved by the simplex projections.
	Projected float64 `json:"projected_l1"`
	Seconds   float64 `json:"seconds"`
	// Convergence says whether the tensor decompositions converged.
	models.Convergence
	// EM records the Baum–Welch passes that refined the moment fit
	// (Config.EM): the fields above then describe the moment fit, the
	// model the passes' result. nil: the moment fit alone.
	EM *BWRun `json:"em,omitempty"`
}

// Write stores the model as indented JSON, atomically.
func (m *Model) Write(path string) error { return models.WriteJSON(path, m) }

// Read loads a model or an HMM truth file and checks its shape.
func Read(path string) (*Model, error) {
	return models.ReadJSON(path, "an hmm model", (*Model).validate)
}

func (m *Model) dims() (k, d int) { return m.K, m.D }

func (m *Model) validate() error {
	if len(m.O) != m.K || len(m.T) != m.K || len(m.Pi) != m.K {
		return fmt.Errorf("hmm model: k=%d but O has %d rows, T %d, pi %d entries", m.K, len(m.O), len(m.T), len(m.Pi))
	}
	for j := range m.K {
		if len(m.O[j]) != m.D || len(m.T[j]) != m.K {
			return fmt.Errorf("hmm model: row %d of O has %d entries (d=%d), of T %d (k=%d)", j, len(m.O[j]), m.D, len(m.T[j]), m.K)
		}
	}
	if m.Var != nil {
		if len(m.Var) != m.K {
			return fmt.Errorf("hmm model: k=%d but var has %d entries", m.K, len(m.Var))
		}
		for j, v := range m.Var {
			if !(v > 0) || math.IsInf(v, 1) {
				return fmt.Errorf("hmm model: the variance of state %d is %g, want a finite number > 0", j, v)
			}
		}
	}
	if m.VarDiag != nil {
		if m.Var != nil {
			return fmt.Errorf("hmm model: both var and var_diag: a model has one variance per state or one per state and coordinate")
		}
		if len(m.VarDiag) != m.K {
			return fmt.Errorf("hmm model: k=%d but var_diag has %d rows", m.K, len(m.VarDiag))
		}
		for j, row := range m.VarDiag {
			if len(row) != m.D {
				return fmt.Errorf("hmm model: row %d of var_diag has %d entries (d=%d)", j, len(row), m.D)
			}
			for u, v := range row {
				if !(v > 0) || math.IsInf(v, 1) {
					return fmt.Errorf("hmm model: the variance of state %d, coordinate %d is %g, want a finite number > 0", j, u, v)
				}
			}
		}
	}
	return nil
}

// Metrics compare a fitted HMM with the truth after relabelling the states to
// the closest observation columns.
type Metrics struct {
	// O and T are relative spectral-norm errors ‖Â − A‖₂/‖A‖₂ after relabelling.
	O float64 `json:"O_rel_err"`
	T float64 `json:"T_rel_err"`
	// Pi is the ℓ1 distance of the initial distributions.
	Pi   float64 `json:"pi_l1"`
	Perm []int   `json:"perm"`
}

// Eval compares est with truth.
func Eval(est, truth *Model) (*Metrics, error) {
	if err := models.CheckPair("hmm", est, truth, (*Model).validate, (*Model).dims); err != nil {
		return nil, err
	}
	perm, err := models.MatchNearest(truth.O, est.O)
	if err != nil {
		return nil, err
	}
	m := &Metrics{Perm: perm, O: models.RelErrCols(est.O, truth.O, perm), T: models.RelErrSquare(est.T, truth.T, perm)}
	for i, pi := range perm {
		m.Pi += math.Abs(est.Pi[pi] - truth.Pi[i])
	}
	return m, nil
}

// seconds is where a fit records its wall time.
func (m *Model) seconds() *float64 { return &m.Fit.Seconds }
