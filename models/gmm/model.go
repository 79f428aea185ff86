package gmm

import (
	"fmt"

	"github.com/streamfit/streamfit/models"
)

// Model is a fitted (or true) spherical Gaussian mixture: the generator
// (stream/synth) writes its truth files as this type.
type Model struct {
	Model string `json:"model"` // "gmm"
	K     int    `json:"k"`
	D     int    `json:"d"`
	// Weights are the mixing weights wᵢ (they sum to 1 up to estimation error).
	Weights []float64 `json:"weights"`
	// Means has K rows μᵢ of length D.
	Means [][]float64 `json:"means"`
	// Variances are the σᵢ² (all equal for a common-variance fit).
	Variances []float64 `json:"variances"`
	// Fit describes the fit; nil for a truth file.
	Fit *FitRecord `json:"stats,omitempty"`
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
	if len(m.Weights) != m.K || len(m.Means) != m.K || len(m.Variances) != m.K {
		return fmt.Errorf("gmm model: k=%d but %d weights, %d means, %d variances", m.K, len(m.Weights), len(m.Means), len(m.Variances))
	}
	for i, mu := range m.Means {
		if len(mu) != m.D {
			return fmt.Errorf("gmm model: mean %d has %d entries, d=%d", i, len(mu), m.D)
		}
	}
	return nil
}

// seconds is where a fit records its wall time.
func (m *Model) seconds() *float64 { return &m.Fit.Seconds }
