package solver

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// multilinear is an order-p tensor (p = 3 or 4) seen through one contraction:
// every mode but one contracted with a column of its own matrix. The
// alternating updates, clustering and residual removal are written once
// against it and serve Asym and Asym4 alike.
type multilinear interface {
	dims() []int
	// contract sets column j of dst to T with mode free and every other mode
	// m contracted with column j of xs[m] (xs[mode] is ignored).
	contract(ctx context.Context, mode int, dst *mat.Dense, xs []*mat.Dense) error
	// frobSq returns ‖T‖²_F and true when it is cheap to know.
	frobSq() (float64, bool)
}

type order3 struct{ t Asym }

func (o order3) dims() []int { a, b, c := o.t.Dims(); return []int{a, b, c} }

func (o order3) contract(ctx context.Context, mode int, dst *mat.Dense, xs []*mat.Dense) error {
	x := others(xs, mode, 2)
	return o.t.Contract(ctx, mode, dst, x[0], x[1])
}

func (o order3) frobSq() (float64, bool) { return normOf(o.t) }

type order4 struct{ t Asym4 }

func (o order4) dims() []int { a, b, c, d := o.t.Dims(); return []int{a, b, c, d} }

func (o order4) contract(ctx context.Context, mode int, dst *mat.Dense, xs []*mat.Dense) error {
	x := others(xs, mode, 3)
	return o.t.Contract(ctx, mode, dst, x[0], x[1], x[2])
}

func (o order4) frobSq() (float64, bool) { return normOf(o.t) }

func normOf(t any) (float64, bool) {
	if n, ok := t.(Normer); ok {
		return n.FrobeniusSq(), true
	}
	return math.NaN(), false
}

// others returns the n matrices of xs other than xs[mode], in mode order.
func others(xs []*mat.Dense, mode, n int) []*mat.Dense {
	if len(xs) != n+1 || mode < 0 || mode > n {
		panic(fmt.Sprintf("solver: contraction of mode %d with %d factor matrices", mode, len(xs)))
	}
	out := make([]*mat.Dense, 0, n)
	for m, x := range xs {
		if m != mode {
			out = append(out, x)
		}
	}
	return out
}

// cpValuesN returns T(f_0j, …, f_{p−1}j) for each column j.
func cpValuesN(ctx context.Context, t multilinear, f []*mat.Dense) ([]float64, error) {
	p := len(f)
	d, L := f[p-1].Dims()
	out := mat.NewDense(d, L, nil)
	if err := t.contract(ctx, p-1, out, f); err != nil {
		return nil, err
	}
	w := make([]float64, L)
	ColDots(w, out, f[p-1])
	return w, nil
}

// gramProduct returns G with G_ij = Π_{m ∉ skip} ⟨f_m,i, f_m,j⟩: the inner
// products of the rank-1 terms (skip = −1) or of their contractions with
// every mode but one.
func gramProduct(f []*mat.Dense, skip int) *mat.Dense {
	_, r := f[0].Dims()
	g := mat.NewDense(r, r, nil)
	first := true
	for m, x := range f {
		if m == skip {
			continue
		}
		var gm mat.Dense
		gm.Mul(x.T(), x)
		if first {
			g.Copy(&gm)
			first = false
		} else {
			g.MulElem(g, &gm)
		}
	}
	return g
}

// cpResidual is ‖T − Σ_i w_i ⊗_m f_m,i‖_F / ‖T‖_F from the norm identity
// ‖T‖² − 2Σw_i T(f_i) + wᵀGw, or NaN when ‖T‖ is not cheap. Like Result's
// residual it cannot resolve values below about 1e-8.
func cpResidual(ctx context.Context, t multilinear, w []float64, f []*mat.Dense) float64 {
	base, ok := t.frobSq()
	if !ok || !(base > 0) {
		return math.NaN()
	}
	vals, err := cpValuesN(ctx, t, f)
	if err != nil {
		return math.NaN()
	}
	g := gramProduct(f, -1)
	s := base
	for i, wi := range w {
		s -= 2 * wi * vals[i]
		for j, wj := range w {
			s += wi * wj * g.At(i, j)
		}
	}
	return math.Sqrt(math.Max(s, 0) / base)
}
