package implicit

import (
	"context"
	"errors"
	"fmt"

	"github.com/streamfit/streamfit/solver"
	"gonum.org/v1/gonum/mat"
)

// Operator is the implicit whitened raw third moment θ ↦ Ê3(W,W,W)(I,θ,θ)
// over cached whitened document rows y = Wᵀc (MATH §3.3): per block of L
// vectors it costs O(n·k·L) for the rows plus O(d·k·L) for the terms that were
// aggregated over documents, and it never forms a k×k×k object. It implements
// solver.Tensor and agrees with the explicit Whitened.E3 to rounding.
type Operator struct {
	k, d int
	n    float64    // number of documents averaged over
	rows *mat.Dense // n×k, y per document
	inv3 []float64  // 1/(ℓ(ℓ−1)(ℓ−2)) per row
	w    *mat.Dense // d×k whitening matrix of the pass
	z    *mat.Dense // d×k, Σ c_i y / n3
	g3   []float64  // Σ c_i / n3
}

var _ solver.Tensor = (*Operator)(nil)

// opRows is the number of cached rows contracted at once, bounding the
// scratch to opRows×L.
const opRows = 4096

// Operator returns the implicit operator for statistics accumulated with
// KeepRows and the whitening matrix w of that pass. It shares a's memory.
func (a *TripleAcc) Operator(w *mat.Dense) (*Operator, error) {
	if !a.KeepRows {
		return nil, errors.New("implicit: Operator needs statistics accumulated with KeepRows")
	}
	if r, c := w.Dims(); r != a.D || c != a.K {
		panic(fmt.Sprintf("implicit: Operator(d=%d, k=%d) given W of %d×%d", a.D, a.K, r, c))
	}
	if a.Docs == 0 {
		return nil, ErrNoDocs
	}
	n := len(a.InvN3)
	return &Operator{
		k: a.K, d: a.D, n: float64(a.Docs),
		rows: mat.NewDense(max(n, 1), a.K, growTo(a.Rows, max(n, 1)*a.K)),
		inv3: a.InvN3,
		w:    w,
		z:    mat.NewDense(a.D, a.K, a.Z),
		g3:   a.G3,
	}, nil
}

// Dim is k.
func (o *Operator) Dim() int { return o.k }

// Apply sets column j of dst to Ê3(W,W,W)(I,θ_j,θ_j). With u = Wθ the
// per-document terms of §3.3 sum to
//
//	Σ (yᵀθ)² y/n3 + Wᵀ(2 g3⊙u⊙u − 2 u⊙(Zθ)) − Zᵀ(u⊙u),
//
// divided by the number of documents.
func (o *Operator) Apply(ctx context.Context, dst, theta *mat.Dense) error {
	kr, l := theta.Dims()
	if dr, dc := dst.Dims(); kr != o.k || dr != o.k || dc != l {
		panic(fmt.Sprintf("implicit: Operator.Apply: dim %d, theta %d×%d, dst %d×%d", o.k, kr, l, dr, dc))
	}
	dst.Zero()
	n := len(o.inv3)
	var g, part mat.Dense
	part.ReuseAs(o.k, l)
	for r0 := 0; r0 < n; r0 += opRows {
		if err := ctx.Err(); err != nil {
			return err
		}
		r1 := min(r0+opRows, n)
		y := o.rows.Slice(r0, r1, 0, o.k)
		g.Reset()
		g.Mul(y, theta)
		gr := g.RawMatrix()
		for r := range r1 - r0 {
			row := gr.Data[r*gr.Stride : r*gr.Stride+l]
			s := o.inv3[r0+r]
			for j, v := range row {
				row[j] = v * v * s
			}
		}
		part.Mul(y.T(), &g)
		dst.Add(dst, &part)
	}
	var u, zt mat.Dense
	u.Mul(o.w, theta)
	zt.Mul(o.z, theta)
	ur, zr := u.RawMatrix(), zt.RawMatrix()
	v := mat.NewDense(o.d, l, nil)
	uu := mat.NewDense(o.d, l, nil)
	vr, uur := v.RawMatrix(), uu.RawMatrix()
	for i := range o.d {
		for j := range l {
			x := ur.Data[i*ur.Stride+j]
			vr.Data[i*vr.Stride+j] = 2*o.g3[i]*x*x - 2*x*zr.Data[i*zr.Stride+j]
			uur.Data[i*uur.Stride+j] = x * x
		}
	}
	part.Mul(o.w.T(), v)
	dst.Add(dst, &part)
	part.Mul(o.z.T(), uu)
	dst.Sub(dst, &part)
	dst.Scale(1/o.n, dst)
	return nil
}
