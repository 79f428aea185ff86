package multiview

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/streamfit/streamfit/models"
)

// Model is a fitted (or true) three-view mixture; a truth file (TruthOf)
// reads as one.
type Model struct {
	Model string `json:"model"` // "multiview"
	K     int    `json:"k"`
	D     int    `json:"d"`
	// Views are the column indices of views 1, 2 and 3.
	Views   [][]int   `json:"views"`
	Weights []float64 `json:"weights"`
	// Means[t] has K rows, the conditional means of view t (length len(Views[t])).
	Means [][][]float64 `json:"means"`
	// Rotated reports that the rows were rotated before the views were cut
	// (Config.Rotate): Means are then in rotated coordinates.
	Rotated bool `json:"rotated,omitempty"`
	// Components are the K full component means in the original
	// coordinates, when Rotated and the views cover every column.
	Components [][]float64 `json:"components,omitempty"`
	Fit        *FitRecord  `json:"stats,omitempty"`
}

// FitRecord describes a fit: what it saw and did.
type FitRecord struct {
	Rows      int64     `json:"rows"`
	Passes    int       `json:"passes"`
	Solver    string    `json:"solver"`
	Whitening []float64 `json:"whitening"`
	Lambda    []float64 `json:"lambda"`
	// WeightSum is Σŵᵢ before normalisation (≈ 1).
	WeightSum float64 `json:"weight_sum"`
	Seconds   float64 `json:"seconds"`
	// Convergence says whether the tensor decompositions converged.
	models.Convergence
}

// Write stores the model as indented JSON, atomically.
func (m *Model) Write(path string) error { return models.WriteJSON(path, m) }

// Read loads a model or a multi-view truth file and checks its shape.
func Read(path string) (*Model, error) {
	return models.ReadJSON(path, "a multiview model", (*Model).validate)
}

func (m *Model) validate() error {
	if len(m.Views) != 3 || len(m.Means) != 3 || len(m.Weights) != m.K {
		return fmt.Errorf("multiview model: need 3 views and 3 mean blocks and k=%d weights (have %d, %d, %d)", m.K, len(m.Views), len(m.Means), len(m.Weights))
	}
	for t := range 3 {
		if len(m.Means[t]) != m.K {
			return fmt.Errorf("multiview model: view %d has %d means, k=%d", t+1, len(m.Means[t]), m.K)
		}
		for i, mu := range m.Means[t] {
			if len(mu) != len(m.Views[t]) {
				return fmt.Errorf("multiview model: view %d mean %d has %d entries, the view has %d columns", t+1, i, len(mu), len(m.Views[t]))
			}
		}
	}
	return nil
}

// short prints a column list, eliding the middle of long ones.
func short(cols []int) string {
	if len(cols) <= 8 {
		return fmt.Sprint(cols)
	}
	return fmt.Sprintf("%v … %v (%d columns)", cols[:4], cols[len(cols)-2:], len(cols))
}

// ViewsFlag formats views as the --views flag reads them: "0,1,2;3,4;5,6".
func ViewsFlag(views [][]int) string {
	var b strings.Builder
	for t, v := range views {
		if t > 0 {
			b.WriteByte(';')
		}
		for j, c := range v {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(c))
		}
	}
	return b.String()
}

// Metrics compare a fitted mixture with the truth after relabelling (Hungarian
// on the squared distance of the concatenated means).
type Metrics struct {
	// Means[t] is ‖M̂₍ₜ₎ − M₍ₜ₎‖₂/‖M₍ₜ₎‖₂ for view t (spectral norm).
	Means []float64 `json:"means_rel_err"`
	// Weights is the ℓ1 distance of the weights.
	Weights float64 `json:"weights_l1"`
	Perm    []int   `json:"perm"`
}

// Eval compares est with truth.
func Eval(est, truth *Model) (*Metrics, error) {
	if err := est.validate(); err != nil {
		return nil, err
	}
	if err := truth.validate(); err != nil {
		return nil, err
	}
	if est.K != truth.K {
		return nil, fmt.Errorf("multiview: fitted k=%d but the truth has k=%d", est.K, truth.K)
	}
	if est.Rotated != truth.Rotated {
		return nil, fmt.Errorf("multiview: the fit's view means are in rotated coordinates (Rotate, 004 Prop 3.3) and the truth's are not; compare its components with the mixture instead")
	}
	for t := range 3 {
		if !slices.Equal(est.Views[t], truth.Views[t]) {
			return nil, fmt.Errorf("multiview: the fit and the truth cut the columns into different views (view %d is columns %s in the fit, %s in the truth), so their means are not comparable; fit again with the views of the truth file (Views %q)",
				t+1, short(est.Views[t]), short(truth.Views[t]), ViewsFlag(truth.Views))
		}
	}
	k := truth.K
	// Components are matched on all three views' means together.
	joined := func(m *Model, i int) []float64 {
		return slices.Concat(m.Means[0][i], m.Means[1][i], m.Means[2][i])
	}
	tj, ej := make([][]float64, k), make([][]float64, k)
	for i := range k {
		tj[i], ej[i] = joined(truth, i), joined(est, i)
	}
	perm, err := models.MatchNearest(tj, ej)
	if err != nil {
		return nil, err
	}
	m := &Metrics{Perm: perm, Means: make([]float64, 3)}
	for t := range 3 {
		m.Means[t] = models.RelErrCols(est.Means[t], truth.Means[t], perm)
	}
	for i, j := range perm {
		m.Weights += math.Abs(est.Weights[j] - truth.Weights[i])
	}
	return m, nil
}

// seconds is where a fit records its wall time.
func (m *Model) seconds() *float64 { return &m.Fit.Seconds }
