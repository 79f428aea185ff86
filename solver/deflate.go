package solver

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// Deflated is T − Σ_j λ_j v_j⊗3 evaluated implicitly (docs/MATH.md §3.7): the base
// tensor is never rebuilt, each contraction subtracts the found components.
type Deflated struct {
	base Tensor
	w    []float64
	v    *mat.Dense // Dim × m, or nil when m = 0
}

// Deflate returns t − Σ_j w_j v_j⊗3 for the columns v_j of v (Dim × m) as an
// implicit tensor. v and w are copied.
func Deflate(t Tensor, w []float64, v *mat.Dense) *Deflated {
	d := &Deflated{base: t, w: append([]float64(nil), w...)}
	if v != nil {
		r, c := v.Dims()
		if r != t.Dim() || c != len(w) {
			panic(fmt.Sprintf("solver: Deflate: v is %d×%d, dim %d, %d weights", r, c, t.Dim(), len(w)))
		}
		if c > 0 {
			d.v = mat.DenseCopyOf(v)
		}
	}
	return d
}

// Dim returns the base tensor's dimension.
func (d *Deflated) Dim() int { return d.base.Dim() }

// Apply sets dst to T(I,θ,θ) − Σ_j λ_j (v_jᵀθ)² v_j, using two GEMMs for the correction.
func (d *Deflated) Apply(ctx context.Context, dst, theta *mat.Dense) error {
	if err := d.base.Apply(ctx, dst, theta); err != nil {
		return err
	}
	if d.v == nil {
		return nil
	}
	var c mat.Dense
	c.Mul(d.v.T(), theta) // m × L
	m, L := c.Dims()
	for i := 0; i < m; i++ {
		row := c.RawRowView(i)
		for j := 0; j < L; j++ {
			row[j] = d.w[i] * row[j] * row[j]
		}
	}
	var corr mat.Dense
	corr.Mul(d.v, &c)
	dst.Sub(dst, &corr)
	return nil
}

// Slice sets dst to T(I,I,w) − Σ_j λ_j (v_jᵀw) v_j v_jᵀ.
func (d *Deflated) Slice(ctx context.Context, dst *mat.SymDense, w []float64) error {
	if err := SliceOf(ctx, d.base, dst, w); err != nil {
		return err
	}
	if d.v == nil {
		return nil
	}
	wv := mat.NewVecDense(len(w), append([]float64(nil), w...))
	col := make([]float64, d.Dim())
	for j := range d.w {
		mat.Col(col, j, d.v)
		vj := mat.NewVecDense(len(col), col)
		dst.SymRankOne(dst, -d.w[j]*mat.Dot(vj, wv), vj)
	}
	return nil
}

// frobSq is Σ T² of the deflated tensor from the norm identity
// ‖T‖² − 2Σλ_j T(v_j,v_j,v_j) + Σ_ij λ_iλ_j (v_iᵀv_j)³.
func (d *Deflated) frobSq(ctx context.Context) (float64, error) {
	base, err := FrobeniusSq(ctx, d.base)
	if err != nil || d.v == nil {
		return base, err
	}
	r, err := residualTerms(ctx, d.base, d.w, d.v)
	return base + r, err
}

// residualTerms returns −2Σλ_j T(v_j,v_j,v_j) + Σ_ij λ_iλ_j (v_iᵀv_j)³, so that
// ‖T − Σλ v⊗3‖² = ‖T‖² + residualTerms.
func residualTerms(ctx context.Context, t Tensor, w []float64, v *mat.Dense) (float64, error) {
	m := len(w)
	vals := make([]float64, m)
	if err := Cubic(ctx, t, vals, v); err != nil {
		return 0, err
	}
	var g mat.Dense
	g.Mul(v.T(), v)
	s := 0.0
	for i := 0; i < m; i++ {
		s -= 2 * w[i] * vals[i]
		for j := 0; j < m; j++ {
			x := g.At(i, j)
			s += w[i] * w[j] * x * x * x
		}
	}
	return s, nil
}
