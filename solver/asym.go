package solver

import (
	"context"

	"gonum.org/v1/gonum/mat"
)

// Asym is a general third-order tensor on R^{d1}×R^{d2}×R^{d3} known only
// through contractions of two modes; alternating rank-1 updates, CP-ALS and
// asymmetric joint diagonalisation need nothing else.
type Asym interface {
	// Dims returns d1, d2, d3.
	Dims() (d1, d2, d3 int)
	// Contract leaves mode (0, 1 or 2) free and contracts the other two,
	// in mode order, with column j of x and y: for mode 0 column j of dst
	// is T(I, x_j, y_j), for mode 1 T(x_j, I, y_j), for mode 2 T(x_j, y_j, I).
	Contract(ctx context.Context, mode int, dst, x, y *mat.Dense) error
}

// Asym4 is a general fourth-order tensor on R^{d1}×⋯×R^{d4} known only
// through contractions of three modes ([002] eq. (30) needs nothing else).
type Asym4 interface {
	// Dims returns d1, d2, d3, d4.
	Dims() (d1, d2, d3, d4 int)
	// Contract leaves mode (0…3) free and contracts the other three, in
	// mode order, with column j of x, y and z: for mode 1 column j of dst
	// is T(x_j, I, y_j, z_j).
	Contract(ctx context.Context, mode int, dst, x, y, z *mat.Dense) error
}

// SymAsym views a symmetric Tensor as an Asym. T(I,x,y) comes from the
// polarisation identity 4T(I,x,y) = T(I,x+y,x+y) − T(I,x−y,x−y), one Apply of
// 2L columns; x and y are rescaled to unit columns first so neither swamps
// the other (the result is scaled back). The view is a Normer when t is.
func SymAsym(t Tensor) Asym {
	if n, ok := t.(Normer); ok {
		return symAsymNormed{symAsym{t}, n}
	}
	return symAsym{t}
}

type symAsym struct{ t Tensor }

type symAsymNormed struct {
	symAsym
	n Normer
}

func (s symAsymNormed) FrobeniusSq() float64 { return s.n.FrobeniusSq() }

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
