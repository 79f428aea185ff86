package gmm_test

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/stream"
)

// Give rows the posterior probability of each component of a mixture
// (scikit-learn's predict_proba): a row between two means splits evenly,
// a row on a mean belongs to its component.
func ExampleResponsibilities() {
	m := &gmm.Model{Model: "gmm", K: 2, D: 2,
		Weights:   []float64{0.5, 0.5},
		Means:     [][]float64{{-2, 0}, {2, 0}},
		Variances: []float64{1, 1},
	}
	rows := &stream.MemoryDense{All: &stream.Dense{Rows: 3, Cols: 2, Data: []float64{0, 0, 2, 0, -2, 1}}}
	err := gmm.Responsibilities(context.Background(), m, rows, 0, func(first int64, n int, shares []float64) error {
		for i := range n {
			fmt.Printf("row %d: %.4f %.4f\n", first+int64(i), shares[2*i], shares[2*i+1])
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	// Output:
	// row 0: 0.5000 0.5000
	// row 1: 0.0003 0.9997
	// row 2: 0.9997 0.0003
}

// Score held-out rows by a diagonal mixture's average log-likelihood per
// row (scikit-learn's GaussianMixture.score): one component, variances 1
// and 4, so a row at the mean has log p = −log(2π) − ½ log 4.
func ExampleLogLikelihood() {
	m := &gmm.Model{Model: "gmm", Covariance: gmm.CovDiag, K: 1, D: 2,
		Weights: []float64{1},
		Means:   [][]float64{{0, 0}},
		Diag:    [][]float64{{1, 4}},
	}
	rows := &stream.MemoryDense{All: &stream.Dense{Rows: 2, Cols: 2, Data: []float64{0, 0, 1, 2}}}
	s, err := gmm.LogLikelihood(context.Background(), m, rows, 0)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d rows, %.4f per row\n", s.Rows, s.LogLik)
	// Output: 2 rows, -3.0310 per row
}
