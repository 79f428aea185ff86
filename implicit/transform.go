package implicit

import (
	"context"
	"fmt"

	"github.com/streamfit/streamfit/tensor"
	"gonum.org/v1/gonum/mat"
)

// Transform returns the multilinear image T(P,P,P) of the symmetric tensor t,
// (T(P,P,P))_abc = Σ_ijl T_ijl P_ia P_jb P_lc, for a k×m matrix P. A model
// uses it to re-whiten a third moment when the pass's W only approximately
// whitened M2 (W → W·P). It costs three GEMMs, O(k⁴) work and O(k³) memory.
func Transform(t *tensor.Sym3, p *mat.Dense) *tensor.Sym3 {
	k := t.Dim()
	r, m := p.Dims()
	if r != k {
		panic(fmt.Sprintf("implicit: Transform of a dim-%d tensor by a %d×%d matrix", k, r, m))
	}
	// full[(i·k + j), l] = T_ijl
	full := mat.NewDense(k*k, k, nil)
	for i := range k {
		for j := range k {
			for l := range k {
				full.Set(i*k+j, l, t.At(i, j, l))
			}
		}
	}
	// a[(i·k + j), c] = Σ_l T_ijl P_lc
	var a mat.Dense
	a.Mul(full, p)
	// b[(i·m + bb), c] = Σ_j P_j,bb a[(i,j), c]
	b := mat.NewDense(k*m, m, nil)
	for i := range k {
		blk := b.Slice(i*m, (i+1)*m, 0, m).(*mat.Dense)
		blk.Mul(p.T(), a.Slice(i*k, (i+1)*k, 0, m))
	}
	// c[a, (bb·m + cc)] = Σ_i P_ia b[(i,bb), cc]
	bw := mat.NewDense(k, m*m, b.RawMatrix().Data)
	var c mat.Dense
	c.Mul(p.T(), bw)
	out := tensor.NewSym3(m)
	q := 0
	for i := range m {
		for j := i; j < m; j++ {
			for l := j; l < m; l++ {
				out.Data[q] = c.At(i, j*m+l)
				q++
			}
		}
	}
	out.Invalidate()
	return out
}

// Transformed is the implicit counterpart of Transform: T(P,P,P) for a
// square P, contracted as T(P,P,P)(I,θ,θ) = Pᵀ T(I, Pθ, Pθ) without forming
// any k×k×k object.
type Transformed struct {
	T tensor.Tensor
	P *mat.Dense
}

var _ tensor.Tensor = (*Transformed)(nil)

// Dim is the dimension of the underlying tensor.
func (t *Transformed) Dim() int { return t.T.Dim() }

// Apply sets column j of dst to Pᵀ T(I, Pθ_j, Pθ_j).
func (t *Transformed) Apply(ctx context.Context, dst, theta *mat.Dense) error {
	k, l := theta.Dims()
	if r, c := t.P.Dims(); r != k || c != k || t.T.Dim() != k {
		panic(fmt.Sprintf("implicit: Transformed of dim %d with P %d×%d applied to %d×%d", t.T.Dim(), r, c, k, l))
	}
	var pt mat.Dense
	pt.Mul(t.P, theta)
	out := mat.NewDense(k, l, nil)
	if err := t.T.Apply(ctx, out, &pt); err != nil {
		return err
	}
	dst.Mul(t.P.T(), out)
	return nil
}
