package implicit

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/tensor"
	"gonum.org/v1/gonum/mat"
)

// Correction is the low-rank symmetric term A·Sym₃(V, M) + B·V⊗V⊗V that moment
// corrections add to a whitened third moment (for LDA, docs/MATH.md §3.5:
// V = m̃, M = Ẽ2, A = −α₀/(α₀+2), B = 2α₀²/((α₀+2)(α₀+1))). The model chooses
// A, B; this type only knows the algebra, for explicit and implicit tensors.
type Correction struct {
	A, B float64
	V    []float64
	M    *mat.SymDense
}

// AddTo adds the correction to the explicit tensor t.
func (c *Correction) AddTo(t *tensor.Sym3) {
	k := t.Dim()
	c.check(k)
	v := c.V
	q := 0
	for i := range k {
		for j := i; j < k; j++ {
			for l := j; l < k; l++ {
				s := 0.0
				if c.M != nil {
					s = v[i]*c.M.At(j, l) + v[j]*c.M.At(i, l) + v[l]*c.M.At(i, j)
				}
				t.Data[q] += c.A*s + c.B*v[i]*v[j]*v[l]
				q++
			}
		}
	}
	t.Invalidate()
}

func (c *Correction) check(k int) {
	if len(c.V) != k || (c.M != nil && c.M.SymmetricDim() != k) {
		panic(fmt.Sprintf("implicit: Correction of dim %d applied to a tensor of dim %d", len(c.V), k))
	}
}

// Corrected is a tensor plus a Correction, contracted implicitly:
// Sym₃(V, M)(I,θ,θ) = (θᵀMθ) V + 2 (Vᵀθ) Mθ.
type Corrected struct {
	T tensor.Tensor
	C Correction
}

var _ tensor.Tensor = (*Corrected)(nil)

// Dim is the dimension of the underlying tensor.
func (c *Corrected) Dim() int { return c.T.Dim() }

// Apply contracts the tensor and adds the correction column by column.
func (c *Corrected) Apply(ctx context.Context, dst, theta *mat.Dense) error {
	if err := c.T.Apply(ctx, dst, theta); err != nil {
		return err
	}
	k, l := theta.Dims()
	c.C.check(k)
	v := mat.NewVecDense(k, c.C.V)
	var mt mat.Dense
	if c.C.M != nil {
		mt.Mul(c.C.M, theta)
	}
	for j := range l {
		th := theta.ColView(j)
		a := mat.Dot(v, th)
		quad := 0.0
		if c.C.M != nil {
			quad = mat.Dot(th, mt.ColView(j))
		}
		for i := range k {
			add := c.C.B * a * a * c.C.V[i]
			if c.C.M != nil {
				add += c.C.A * (quad*c.C.V[i] + 2*a*mt.At(i, j))
			}
			dst.Set(i, j, dst.At(i, j)+add)
		}
	}
	return nil
}
