package solver

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// Asym is a general third-order tensor on R^{d1}×R^{d2}×R^{d3} known only
// through contractions of two modes; alternating rank-1 updates and CP-ALS
// need nothing else.
type Asym interface {
	// Dims returns d1, d2, d3.
	Dims() (d1, d2, d3 int)
	// Contract leaves mode (0, 1 or 2) free and contracts the other two,
	// in mode order, with column j of x and y: for mode 0 column j of dst
	// is T(I, x_j, y_j), for mode 1 T(x_j, I, y_j), for mode 2 T(x_j, y_j, I).
	Contract(ctx context.Context, mode int, dst, x, y *mat.Dense) error
}

// SymAsym views a symmetric Tensor as an Asym. T(I,x,y) comes from the
// polarisation identity 4T(I,x,y) = T(I,x+y,x+y) − T(I,x−y,x−y), one Apply of
// 2L columns; x and y are rescaled to unit columns first so neither swamps
// the other (the result is scaled back).
func SymAsym(t Tensor) Asym { return symAsym{t} }

type symAsym struct{ t Tensor }

func (s symAsym) Dims() (int, int, int) { k := s.t.Dim(); return k, k, k }

func (s symAsym) Contract(ctx context.Context, mode int, dst, x, y *mat.Dense) error {
	k := s.t.Dim()
	_, L := x.Dims()
	checkBlock(k, dst, x)
	checkBlock(k, dst, y)
	xs, ys := colNorms(x), colNorms(y)
	theta := mat.NewDense(k, 2*L, nil)
	for j := 0; j < L; j++ {
		fx, fy := safeInv(xs[j]), safeInv(ys[j])
		for i := 0; i < k; i++ {
			a, b := x.At(i, j)*fx, y.At(i, j)*fy
			theta.Set(i, j, a+b)
			theta.Set(i, L+j, a-b)
		}
	}
	out := mat.NewDense(k, 2*L, nil)
	if err := s.t.Apply(ctx, out, theta); err != nil {
		return err
	}
	for j := 0; j < L; j++ {
		f := xs[j] * ys[j] / 4
		for i := 0; i < k; i++ {
			dst.Set(i, j, f*(out.At(i, j)-out.At(i, L+j)))
		}
	}
	return nil
}

func safeInv(x float64) float64 {
	if x == 0 {
		return 0
	}
	return 1 / x
}

// Views yields the three views of n samples in row batches. Each call to Each
// is one pass; x1, x2, x3 hold the same b rows (b × d1, b × d2, b × d3) and
// are only valid during the callback.
type Views interface {
	Dims() (d1, d2, d3 int)
	Each(ctx context.Context, fn func(x1, x2, x3 *mat.Dense) error) error
}

// SampleTensor is the empirical moment T = (1/n) Σ_l x1⁽ˡ⁾⊗x2⁽ˡ⁾⊗x3⁽ˡ⁾ of a
// set of views, never formed: contractions use the Hadamard form
// T(a,b,I) = X₃ᵀ((X₁a)∗(X₂b))/n ([002] eq. 23), three GEMMs per row batch.
// Memory is O(d·L + b·L) per call; this is how k > d is reached.
type SampleTensor struct{ V Views }

// Dims returns the views' dimensions.
func (s SampleTensor) Dims() (int, int, int) { return s.V.Dims() }

// Contract implements Asym over one pass of the views.
func (s SampleTensor) Contract(ctx context.Context, mode int, dst, x, y *mat.Dense) error {
	if mode < 0 || mode > 2 {
		panic(fmt.Sprintf("solver: SampleTensor.Contract: mode %d", mode))
	}
	dst.Zero()
	n := 0
	var p, q, part mat.Dense
	err := s.V.Each(ctx, func(x1, x2, x3 *mat.Dense) error {
		xs := [3]*mat.Dense{x1, x2, x3}
		free := xs[mode]
		u, v := xs[(mode+1)%3], xs[(mode+2)%3]
		// Keep x paired with the lower and y with the higher of the two contracted modes.
		if mode == 1 {
			u, v = x1, x3
		}
		b, _ := free.Dims()
		n += b
		p.Reset()
		q.Reset()
		p.Mul(u, x)
		q.Mul(v, y)
		p.MulElem(&p, &q)
		part.Reset()
		part.Mul(free.T(), &p)
		dst.Add(dst, &part)
		return nil
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("solver: %w: the views yielded no rows", ErrDegenerate)
	}
	dst.Scale(1/float64(n), dst)
	return nil
}

// DenseViews holds three views in memory (rows are samples) and yields them
// in batches of Batch rows (default 4096).
type DenseViews struct {
	X1, X2, X3 *mat.Dense
	Batch      int
}

// Dims returns the column counts of the views.
func (v DenseViews) Dims() (int, int, int) {
	_, a := v.X1.Dims()
	_, b := v.X2.Dims()
	_, c := v.X3.Dims()
	return a, b, c
}

// Each yields consecutive row batches.
func (v DenseViews) Each(ctx context.Context, fn func(x1, x2, x3 *mat.Dense) error) error {
	n, _ := v.X1.Dims()
	bs := v.Batch
	if bs <= 0 {
		bs = 4096
	}
	d1, d2, d3 := v.Dims()
	for s := 0; s < n; s += bs {
		if err := ctx.Err(); err != nil {
			return err
		}
		e := min(n, s+bs)
		if err := fn(v.X1.Slice(s, e, 0, d1).(*mat.Dense), v.X2.Slice(s, e, 0, d2).(*mat.Dense), v.X3.Slice(s, e, 0, d3).(*mat.Dense)); err != nil {
			return err
		}
	}
	return nil
}
