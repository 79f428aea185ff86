package sketch

import (
	"context"

	"gonum.org/v1/gonum/mat"
)

// Operator is a symmetric linear map of dimension Dim, known only through
// products with blocks of vectors. MulBlock sets dst (Dim×c) to A·omega for an
// omega of Dim×c; it may be expensive (one pass over a data set), so callers
// batch all the vectors they need into one block.
type Operator interface {
	Dim() int
	MulBlock(ctx context.Context, dst, omega *mat.Dense) error
}

// Dense adapts an explicit symmetric matrix to Operator, for tests and for
// problems small enough to hold.
type Dense struct{ A mat.Symmetric }

// Dim is the order of the matrix.
func (d Dense) Dim() int { return d.A.SymmetricDim() }

// MulBlock sets dst = A·omega.
func (d Dense) MulBlock(_ context.Context, dst, omega *mat.Dense) error {
	dst.Mul(d.A, omega)
	return nil
}
