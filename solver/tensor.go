package solver

import (
	"context"
	"fmt"
	"math"

	"github.com/streamfit/streamfit/tensor"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Tensor is a symmetric third-order tensor on R^k known only through
// contractions (an alias of tensor.Tensor).
type Tensor = tensor.Tensor

// Slicer is implemented by tensors that can form T(I,I,w) (k×k symmetric)
// directly (an alias of tensor.Slicer).
type Slicer = tensor.Slicer

// Normer is implemented by tensors that know their squared Frobenius norm
// cheaply (an alias of tensor.Normer).
type Normer = tensor.Normer

// Sym3 is an explicit symmetric k×k×k tensor stored packed (an alias of
// tensor.Sym3).
type Sym3 = tensor.Sym3

// NewSym3 returns a zero symmetric tensor of dimension k.
func NewSym3(k int) *Sym3 { return tensor.NewSym3(k) }

// FromFactors returns Σ_r w_r v_r⊗v_r⊗v_r, where v is k×R with the factors as columns.
func FromFactors(w []float64, v *mat.Dense) *Sym3 { return tensor.FromFactors(w, v) }

// checkBlock panics with a clear message when dst or theta do not fit a k-dimensional tensor.
func checkBlock(k int, dst, theta *mat.Dense) { tensor.CheckApply(k, dst, theta) }

// Cubic sets dst[j] = θ_jᵀ T(I,θ_j,θ_j) = T(θ_j,θ_j,θ_j) for each column of theta.
// It costs one Apply call; dst must have one entry per column.
func Cubic(ctx context.Context, t Tensor, dst []float64, theta *mat.Dense) error {
	k, l := theta.Dims()
	if len(dst) != l {
		panic(fmt.Sprintf("solver: Cubic: len(dst)=%d, theta has %d columns", len(dst), l))
	}
	tt := mat.NewDense(k, l, nil)
	if err := t.Apply(ctx, tt, theta); err != nil {
		return err
	}
	ColDots(dst, tt, theta)
	return nil
}

// ColDots sets dst[j] = a_jᵀ b_j for the columns of a and b. With a = T(I,θ,θ)
// from an Apply already made and b = θ it gives T(θ,θ,θ) at no extra Apply.
func ColDots(dst []float64, a, b *mat.Dense) {
	r, c := a.Dims()
	if br, bc := b.Dims(); br != r || bc != c || len(dst) != c {
		panic("solver: ColDots shape mismatch")
	}
	for j := range dst {
		s := 0.0
		for i := 0; i < r; i++ {
			s += a.At(i, j) * b.At(i, j)
		}
		dst[j] = s
	}
}

// SliceOf sets dst (k×k) to T(I,I,w). It uses t's own Slice when t is a
// Slicer, and otherwise the exact polarisation identity
//
//	T(I,e_j,w) = [T(I, s e_j + w, s e_j + w) − T(I, s e_j − w, s e_j − w)] / (4s)
//
// which holds because (u,v) ↦ T(I,u,v) is symmetric bilinear. All 2k
// contractions go into one Apply call; s = ‖w‖ keeps both arguments of
// comparable size so no precision is lost to cancellation. The result is
// symmetrised (it is symmetric up to rounding).
func SliceOf(ctx context.Context, t Tensor, dst *mat.SymDense, w []float64) error {
	if s, ok := t.(Slicer); ok {
		return s.Slice(ctx, dst, w)
	}
	k := t.Dim()
	if len(w) != k || dst.SymmetricDim() != k {
		panic(fmt.Sprintf("solver: SliceOf: dim %d, len(w)=%d, dst %d", k, len(w), dst.SymmetricDim()))
	}
	ws := mat.NewDense(k, 1, append([]float64(nil), w...))
	dsts := []*mat.SymDense{dst}
	return slicesByPolarisation(ctx, t, dsts, ws)
}

// Slices sets dsts[l] = T(I,I,w_l) for each column w_l of ws (k×L). Slicers
// are asked slice by slice; other tensors answer one batched Apply per group
// of projections (see SliceOf for the identity used).
func Slices(ctx context.Context, t Tensor, dsts []*mat.SymDense, ws *mat.Dense) error {
	k, l := ws.Dims()
	if k != t.Dim() || len(dsts) != l {
		panic(fmt.Sprintf("solver: Slices: dim %d, ws %d×%d, %d destinations", t.Dim(), k, l, len(dsts)))
	}
	if s, ok := t.(Slicer); ok {
		w := make([]float64, k)
		for j := 0; j < l; j++ {
			mat.Col(w, j, ws)
			if err := s.Slice(ctx, dsts[j], w); err != nil {
				return err
			}
		}
		return nil
	}
	return slicesByPolarisation(ctx, t, dsts, ws)
}

// slicesByPolarisation forms each T(I,I,w_l) from 2k contractions, batching
// up to maxPolarCols columns per Apply so memory stays O(k·maxPolarCols).
func slicesByPolarisation(ctx context.Context, t Tensor, dsts []*mat.SymDense, ws *mat.Dense) error {
	const maxPolarCols = 4096
	k, l := ws.Dims()
	per := max(1, maxPolarCols/(2*k)) // projections per Apply
	w := make([]float64, k)
	for start := 0; start < l; start += per {
		n := min(per, l-start)
		theta := mat.NewDense(k, 2*k*n, nil)
		scales := make([]float64, n)
		for p := 0; p < n; p++ {
			mat.Col(w, start+p, ws)
			s := floats.Norm(w, 2)
			if s == 0 {
				s = 1
			}
			scales[p] = s
			for j := 0; j < k; j++ {
				cp, cm := 2*k*p+j, 2*k*p+k+j
				for i := 0; i < k; i++ {
					theta.Set(i, cp, w[i])
					theta.Set(i, cm, -w[i])
				}
				theta.Set(j, cp, theta.At(j, cp)+s)
				theta.Set(j, cm, theta.At(j, cm)+s)
			}
		}
		out := mat.NewDense(k, 2*k*n, nil)
		if err := t.Apply(ctx, out, theta); err != nil {
			return err
		}
		for p := 0; p < n; p++ {
			d := dsts[start+p]
			if d.SymmetricDim() != k {
				panic("solver: slice destination has wrong size")
			}
			f := 1 / (4 * scales[p])
			for i := 0; i < k; i++ {
				for j := i; j < k; j++ {
					// Column j of the slice is T(I,e_j,w); average (i,j) and (j,i).
					a := out.At(i, 2*k*p+j) - out.At(i, 2*k*p+k+j)
					b := out.At(j, 2*k*p+i) - out.At(j, 2*k*p+k+i)
					d.SetSym(i, j, 0.5*f*(a+b))
				}
			}
		}
	}
	return nil
}

// FrobeniusSq returns Σ_ijl T_ijl². Normers answer directly, deflated tensors
// use the norm identity on their base; otherwise it is
// Σ_i ‖T(I,I,e_i)‖²_F, which costs 2k² contractions (fine for explicit or
// small tensors, expensive for implicit operators over many rows).
func FrobeniusSq(ctx context.Context, t Tensor) (float64, error) {
	if n, ok := t.(Normer); ok {
		return n.FrobeniusSq(), nil
	}
	if d, ok := t.(*Deflated); ok {
		return d.frobSq(ctx)
	}
	k := t.Dim()
	eye := mat.NewDense(k, k, nil)
	dsts := make([]*mat.SymDense, k)
	for i := range dsts {
		eye.Set(i, i, 1)
		dsts[i] = mat.NewSymDense(k, nil)
	}
	if err := Slices(ctx, t, dsts, eye); err != nil {
		return 0, err
	}
	s := 0.0
	for _, d := range dsts {
		s += symFrobSq(d)
	}
	return s, nil
}

// symFrobSq returns the squared Frobenius norm of a symmetric matrix.
func symFrobSq(a *mat.SymDense) float64 {
	n := a.SymmetricDim()
	s := 0.0
	for i := 0; i < n; i++ {
		s += a.At(i, i) * a.At(i, i)
		for j := i + 1; j < n; j++ {
			s += 2 * a.At(i, j) * a.At(i, j)
		}
	}
	return s
}

// normalizeCols scales every column of m to unit length. Zero columns are
// left at zero.
func normalizeCols(m *mat.Dense) {
	r, c := m.Dims()
	for j := 0; j < c; j++ {
		n := 0.0
		for i := 0; i < r; i++ {
			n += m.At(i, j) * m.At(i, j)
		}
		n = math.Sqrt(n)
		if n > 0 {
			for i := 0; i < r; i++ {
				m.Set(i, j, m.At(i, j)/n)
			}
		}
	}
}
