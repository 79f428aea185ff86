package implicit

import (
	"context"
	"errors"
	"fmt"

	"github.com/streamfit/streamfit/tensor"
	"gonum.org/v1/gonum/mat"
)

// Operator is the implicit whitened raw third moment θ ↦ Ê3(W,W,W)(I,θ,θ)
// over cached whitened document rows y = Wᵀc (docs/MATH.md §3.3): per block of L
// vectors it costs O(n·k·L) for the rows plus O(d·k·L) for the terms that were
// aggregated over documents, and it never forms a k×k×k object. It implements
// tensor.Tensor and agrees with the explicit Whitened.E3 to rounding.
type Operator struct {
	k, d int
	n    float64    // number of documents averaged over
	rows *mat.Dense // n×k, y per document
	inv3 []float64  // 1/(ℓ(ℓ−1)(ℓ−2)) per row
	w    *mat.Dense // d×k whitening matrix of the pass
	z    *mat.Dense // d×k, Σ c_i y / n3
	g3   []float64  // Σ c_i / n3
}

var _ tensor.Tensor = (*Operator)(nil)

// opRows is the number of cached rows contracted at once, bounding the
// scratch to opRows×L.
const opRows = 4096

// WRows is the number of words whose W terms Operator.Apply contracts at
// once, bounding that scratch to 4·WRows×L values whatever the vocabulary.
const WRows = 4096

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
	// The W terms a block of WRows words at a time: whole, their four d×L
	// scratch matrices are 640 MB at d=100,000 and L=200 restarts.
	var u, zt, v, uu mat.Dense
	for i0 := 0; i0 < o.d; i0 += WRows {
		i1 := min(i0+WRows, o.d)
		wb, zb := o.w.Slice(i0, i1, 0, o.k), o.z.Slice(i0, i1, 0, o.k)
		for _, m := range []*mat.Dense{&u, &zt, &v, &uu} {
			m.Reset()
		}
		u.Mul(wb, theta)
		zt.Mul(zb, theta)
		v.ReuseAs(i1-i0, l)
		uu.ReuseAs(i1-i0, l)
		ur, zr := u.RawMatrix(), zt.RawMatrix()
		vr, uur := v.RawMatrix(), uu.RawMatrix()
		for i := range i1 - i0 {
			g := o.g3[i0+i]
			for j := range l {
				x := ur.Data[i*ur.Stride+j]
				vr.Data[i*vr.Stride+j] = 2*g*x*x - 2*x*zr.Data[i*zr.Stride+j]
				uur.Data[i*uur.Stride+j] = x * x
			}
		}
		part.Mul(wb.T(), &v)
		dst.Add(dst, &part)
		part.Mul(zb.T(), &uu)
		dst.Sub(dst, &part)
	}
	dst.Scale(1/o.n, dst)
	return nil
}
