package markov

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/streamfit/streamfit/models"
)

// Model is a fitted (or true) chain learned from snapshots. Matrices are
// stored as rows: P[i][j] = Pr(next state i | state j) (column-stochastic P,
// as in 001), T likewise, and U[i], UT[i] are the columns Uᵢ and (UT)ᵢ of the
// observation matrices. The generator (stream/synth) writes its truth files
// as this type.
type Model struct {
	Model  string      `json:"model"` // the kind: ChainKind's or HMMKind's name
	K      int         `json:"k"`
	D      int         `json:"d"`
	Alpha0 float64     `json:"alpha0"`
	R      float64     `json:"r"`
	Pi     []float64   `json:"pi"`
	P      [][]float64 `json:"P"`
	T      [][]float64 `json:"T,omitempty"`
	U      [][]float64 `json:"U,omitempty"`
	UT     [][]float64 `json:"UT,omitempty"`
	Sigma2 float64     `json:"sigma2,omitempty"`
	// Discrete marks an HMM of one-hot symbols (Config.Discrete): U[i] is
	// state i's distribution of symbols, P = I (see FitHMM).
	Discrete bool `json:"discrete,omitempty"`
	// Scan is the projection-distance curve of the r heuristic, when r was
	// not given.
	Scan []ScanPoint `json:"r_scan,omitempty"`
	Fit  *FitRecord  `json:"stats,omitempty"`
}

// ScanPoint is one r of the scan: the projection distance ‖P(r) − Π(P(r))‖_F
// of 001 §3.1 and the negative mass the scan rule reads (see Scan).
type ScanPoint struct {
	R    float64 `json:"r"`
	Dist float64 `json:"dist"`
	// Neg is the negative mass of P(r) with columns rescaled to sum to 1.
	Neg float64 `json:"neg"`
	// Pole marks r within the skipped window of a pole of rI + (1−r)T.
	Pole bool `json:"pole,omitempty"`
}

// scanJSON is ScanPoint as written: Dist and Neg are +Inf where P(r) has
// a column that does not sum to a positive number, and JSON has no
// infinity, so they are written as null there.
type scanJSON struct {
	R    float64  `json:"r"`
	Dist *float64 `json:"dist"`
	Neg  *float64 `json:"neg"`
	Pole bool     `json:"pole,omitempty"`
}

// finiteOrNil is &x for a finite x and nil otherwise.
func finiteOrNil(x float64) *float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil
	}
	return &x
}

// valueOrInf is *p, or +Inf for nil.
func valueOrInf(p *float64) float64 {
	if p == nil {
		return math.Inf(1)
	}
	return *p
}

// MarshalJSON writes the point with an infinite Dist or Neg as null.
func (p ScanPoint) MarshalJSON() ([]byte, error) {
	return json.Marshal(scanJSON{R: p.R, Dist: finiteOrNil(p.Dist), Neg: finiteOrNil(p.Neg), Pole: p.Pole})
}

// UnmarshalJSON reads a point written by MarshalJSON (null is +Inf).
func (p *ScanPoint) UnmarshalJSON(b []byte) error {
	var s scanJSON
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*p = ScanPoint{R: s.R, Dist: valueOrInf(s.Dist), Neg: valueOrInf(s.Neg), Pole: s.Pole}
	return nil
}

// FitRecord describes a fit: what it saw and did.
type FitRecord struct {
	Rows    int64     `json:"rows"`
	Sets    int64     `json:"sets"`
	Passes  int       `json:"passes"`
	Seconds float64   `json:"seconds"`
	Lambda  []float64 `json:"lambda"`             // tensor eigenvalues of the set moments
	LambdaU []float64 `json:"lambda_u,omitempty"` // of the point moments (HMM)
	// States is the number of states the moments gave (HMM): fewer than
	// k when the others are copies of them (FitHMM).
	States int `json:"states_fitted,omitempty"`
	// RScanned reports that r came from the scan.
	RScanned bool `json:"r_scanned"`
	// Solver names the tensor decomposition used.
	Solver string `json:"solver"`
	// Pairing maps position j (states sorted by weight, as 001 pairs them)
	// to the set-decomposition column chosen for it; the identity when
	// sorting and the stochasticity criterion agree.
	Pairing []int `json:"pairing"`
	// PairingCost is the projection distance of P(r) for that pairing (the
	// median over a grid of r when r was not given).
	PairingCost float64 `json:"pairing_cost"`
	// Convergence says whether the tensor decompositions converged.
	models.Convergence
}

// Write stores the model as indented JSON, atomically.
func (m *Model) Write(path string) error { return models.WriteJSON(path, m) }

// Read loads a model or truth file.
func Read(path string) (*Model, error) {
	return models.ReadJSON(path, "a markov model", (*Model).validate)
}

func (m *Model) dims() (k, d int) { return m.K, m.D }

func (m *Model) validate() error {
	if len(m.Pi) != m.K || len(m.P) != m.K {
		return fmt.Errorf("markov model: k=%d but %d pi and %d rows of P", m.K, len(m.Pi), len(m.P))
	}
	if m.U != nil && (len(m.U) != m.K || len(m.U[0]) != m.D) {
		return fmt.Errorf("markov model: U must have k=%d columns of length d=%d", m.K, m.D)
	}
	return nil
}

// seconds is where a fit records its wall time.
func (m *Model) seconds() *float64 { return &m.Fit.Seconds }
