package gmm

import (
	"encoding/json"
	"fmt"

	"github.com/streamfit/streamfit/models"
)

// Model is a fitted (or true) Gaussian mixture with spherical or diagonal
// covariances: the generator (stream/synth) writes its truth files as this
// type.
//
// Its file is JSON. A diagonal mixture's says so in "covariance": "diag"
// and holds, under "variances", K rows of D variances; a file without
// "covariance" (every spherical mixture, and every file written before
// diagonal mixtures) holds one variance per component there.
type Model struct {
	Model string // "gmm"
	// Covariance is CovDiag for a variance per component and feature (Diag),
	// "" for one per component (Variances).
	Covariance string
	K, D       int
	// Weights are the mixing weights wᵢ (they sum to 1 up to estimation error).
	Weights []float64
	// Means has K rows μᵢ of length D.
	Means [][]float64
	// Variances are the σᵢ² of a spherical mixture (all equal for a
	// common-variance fit); nil for a diagonal one.
	Variances []float64
	// Diag has, for a diagonal mixture, K rows of the variances of the D
	// features; nil for a spherical one.
	Diag [][]float64
	// Fit describes the fit; nil for a truth file.
	Fit *FitRecord
}

// CovDiag is Model.Covariance of a diagonal mixture.
const CovDiag = "diag"

// modelFile is the layout of a Model's file; Variances holds Model.Variances
// or Model.Diag.
type modelFile struct {
	Model      string          `json:"model"`
	Covariance string          `json:"covariance,omitempty"`
	K          int             `json:"k"`
	D          int             `json:"d"`
	Weights    []float64       `json:"weights"`
	Means      [][]float64     `json:"means"`
	Variances  json.RawMessage `json:"variances"`
	Fit        *FitRecord      `json:"stats,omitempty"`
}

// MarshalJSON writes the model file's layout.
func (m Model) MarshalJSON() ([]byte, error) {
	var v any = m.Variances
	if m.IsDiag() {
		v = m.Diag
	}
	vb, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(modelFile{Model: m.Model, Covariance: m.Covariance, K: m.K, D: m.D, Weights: m.Weights, Means: m.Means, Variances: vb, Fit: m.Fit})
}

// UnmarshalJSON reads the model file's layout.
func (m *Model) UnmarshalJSON(b []byte) error {
	var f modelFile
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*m = Model{Model: f.Model, Covariance: f.Covariance, K: f.K, D: f.D, Weights: f.Weights, Means: f.Means, Fit: f.Fit}
	var dst any = &m.Variances
	switch f.Covariance {
	case "":
	case CovDiag:
		dst = &m.Diag
	default:
		return fmt.Errorf("gmm model: covariance %q: want %q, or none for spherical", f.Covariance, CovDiag)
	}
	if len(f.Variances) == 0 {
		return nil
	}
	if err := json.Unmarshal(f.Variances, dst); err != nil {
		what := "one variance per component"
		if f.Covariance == CovDiag {
			what = "k rows of d variances (covariance diag)"
		}
		return fmt.Errorf("gmm model: variances: want %s: %w", what, err)
	}
	return nil
}

// IsDiag reports whether m has a variance per component and feature.
func (m *Model) IsDiag() bool { return m.Covariance == CovDiag }

// Variance returns the variance of feature j in component i.
func (m *Model) Variance(i, j int) float64 {
	if m.IsDiag() {
		return m.Diag[i][j]
	}
	return m.Variances[i]
}

// FitRecord describes a fit: what it saw and did.
type FitRecord struct {
	Rows      int64  `json:"rows"`
	Passes    int    `json:"passes"`
	Method    string `json:"method"` // "exact" or "sketch": how M2 was decomposed
	Solver    string `json:"solver"` // the tensor decomposition (solver.ByName)
	Differing bool   `json:"differing"`
	// Sigma2 is the estimated (or given) σ², the average variance for Differing.
	Sigma2 float64 `json:"sigma2"`
	// Whitening are the k eigenvalues of M2 = E[xxᵀ] − σ²I used to whiten.
	Whitening []float64 `json:"whitening"`
	// Lambda are the tensor eigenvalues λᵢ = 1/√wᵢ, in extraction order.
	Lambda []float64 `json:"lambda"`
	// WeightSum is Σŵᵢ before normalisation, a consistency check (≈ 1).
	WeightSum float64 `json:"weight_sum"`
	Seconds   float64 `json:"seconds"`
	// Convergence says whether the tensor decomposition converged.
	models.Convergence
	// EM records the EM passes that refined the moment fit (Config.EM):
	// the fields above then describe the moment fit, the model the passes'
	// result. nil: the moment fit alone.
	EM *EMRun `json:"em,omitempty"`
}

// Write stores the model as indented JSON, atomically.
func (m *Model) Write(path string) error { return models.WriteJSON(path, m) }

// Read loads a model (or a GMM truth file) and checks its shape.
func Read(path string) (*Model, error) {
	return models.ReadJSON(path, "a gmm model", (*Model).validate)
}

func (m *Model) dims() (k, d int) { return m.K, m.D }

func (m *Model) validate() error {
	nv := len(m.Variances)
	if m.IsDiag() {
		nv = len(m.Diag)
	}
	if len(m.Weights) != m.K || len(m.Means) != m.K || nv != m.K {
		return fmt.Errorf("gmm model: k=%d but %d weights, %d means, %d variances", m.K, len(m.Weights), len(m.Means), nv)
	}
	for i, mu := range m.Means {
		if len(mu) != m.D {
			return fmt.Errorf("gmm model: mean %d has %d entries, d=%d", i, len(mu), m.D)
		}
		if m.IsDiag() && len(m.Diag[i]) != m.D {
			return fmt.Errorf("gmm model: component %d has %d variances, d=%d (covariance diag)", i, len(m.Diag[i]), m.D)
		}
	}
	return nil
}

// seconds is where a fit records its wall time.
func (m *Model) seconds() *float64 { return &m.Fit.Seconds }
