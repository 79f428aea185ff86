package tensor

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// Tensor is a symmetric third-order tensor on R^k known only through contractions.
type Tensor interface {
	// Dim returns k, the size of every mode.
	Dim() int
	// Apply sets column j of dst (k×L) to T(I, θ_j, θ_j) for each column θ_j of theta (k×L).
	Apply(ctx context.Context, dst, theta *mat.Dense) error
}

// Slicer is implemented by tensors that can form T(I,I,w) (k×k symmetric) directly.
type Slicer interface {
	Slice(ctx context.Context, dst *mat.SymDense, w []float64) error
}

// Normer is implemented by tensors that know their squared Frobenius norm
// Σ_ijl T_ijl² cheaply. Residuals and the stopping-condition power method use it.
type Normer interface {
	FrobeniusSq() float64
}

// CheckApply panics with a clear message when dst or theta of an Apply call
// do not fit a k-dimensional tensor (both k×L with the same L).
func CheckApply(k int, dst, theta *mat.Dense) {
	tr, tc := theta.Dims()
	dr, dc := dst.Dims()
	if tr != k || dr != k || tc != dc {
		panic(fmt.Sprintf("tensor: Apply shape mismatch: tensor dim %d, theta %d×%d, dst %d×%d", k, tr, tc, dr, dc))
	}
}
