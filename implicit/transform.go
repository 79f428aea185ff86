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
// whitened M2 (W → W·P).
//
// It takes the output's first index a block of transformBlock at a time:
// the slices S_a = T(P_a, I, I) of the block are one GEMM of P's columns
// with t's k × k(k+1)/2 half unfolding, and each S_a gives the entries
// a ≤ b ≤ c as P[:,a:]ᵀ S_a P[:,a:], which are contiguous in the packed
// output. About 2.7·k⁴ flops and k³/2 floats besides the output, where
// unfolding the whole tensor and three GEMMs took 6·k⁴ flops and four
// k×k×k arrays (256 MB at k=200).
func Transform(t *tensor.Sym3, p *mat.Dense) *tensor.Sym3 {
	k := t.Dim()
	r, m := p.Dims()
	if r != k {
		panic(fmt.Sprintf("implicit: Transform of a dim-%d tensor by a %d×%d matrix", k, r, m))
	}
	out := tensor.NewSym3(m)
	if k == 0 || m == 0 {
		return out
	}
	// half[i, pair(j,l)] = T_ijl for j ≤ l.
	pairs := k * (k + 1) / 2
	half := mat.NewDense(k, pairs, nil)
	for i := range k {
		row := half.RawRowView(i)
		q := 0
		for j := range k {
			for l := j; l < k; l++ {
				row[q] = t.At(i, j, l)
				q++
			}
		}
	}
	blk := min(m, transformBlock)
	slices := mat.NewDense(blk, pairs, nil)
	s := mat.NewDense(k, k, nil)
	sd := s.RawMatrix().Data
	// u = S_a·P[:,a:] and v = P[:,a:]ᵀ·u; Reset keeps their memory, which
	// the first slice, the widest, sized.
	var u, v mat.Dense
	q := 0
	for a0 := 0; a0 < m; a0 += blk {
		nb := min(blk, m-a0)
		sb := slices.Slice(0, nb, 0, pairs).(*mat.Dense)
		sb.Mul(p.Slice(0, k, a0, a0+nb).T(), half)
		for a := a0; a < a0+nb; a++ {
			// S_a, symmetric, from its upper triangle.
			row := sb.RawRowView(a - a0)
			x := 0
			for j := range k {
				for l := j; l < k; l++ {
					sd[j*k+l], sd[l*k+j] = row[x], row[x]
					x++
				}
			}
			tail := p.Slice(0, k, a, m)
			u.Reset()
			u.Mul(s, tail)
			v.Reset()
			v.Mul(tail.T(), &u)
			for b := range m - a {
				vr := v.RawRowView(b)
				q += copy(out.Data[q:], vr[b:])
			}
		}
	}
	out.Invalidate()
	return out
}

// transformBlock is the number of the output's slices Transform forms in
// one GEMM: a block of 32×k(k+1)/2 floats (10 MB at k=200).
const transformBlock = 32

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
