package implicit

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// Rebase returns the statistics a's pass would have gathered whitened by
// w = q·c instead of by q, the D×K matrix a was whitened by (c is K×k):
// every sum a holds but the cubes is linear in the whitened rows
// y = qᵀc_doc, which become cᵀy, so Z and Z2 become Z·c and Z2·c and the
// sums over the terms stay as they are. a must be without cubes
// (NoCubes), whose K³ sums over q would cost (K/k)³ times w's; the result
// has none either, until TakeCubes gives them. With pair false the result
// has no pair sums (NoPair: the caller holds Ê2·w). It costs two D×K×k
// products, where a pass whitened by w would cost a read of the data.
func (a *TripleAcc) Rebase(c, w *mat.Dense, pair bool) *TripleAcc {
	if !a.NoCubes {
		panic("implicit: TripleAcc.Rebase of statistics with cubes")
	}
	kk, k := c.Dims()
	if d, wk := w.Dims(); kk != a.K || d != a.D || wk != k {
		panic(fmt.Sprintf("implicit: TripleAcc.Rebase of d=%d, K=%d statistics by a %d×%d change to a %d×%d W", a.D, a.K, kk, k, d, wk))
	}
	r := NewTripleAccNoCubes(a.D, k)
	r.Counts = a.Counts
	copy(r.G3, a.G3)
	copy(r.G2, a.G2)
	copy(r.M1, a.M1)
	r.Cubes = a.Cubes
	mat.NewDense(a.D, k, r.Z).Mul(mat.NewDense(a.D, a.K, a.Z), c)
	if pair && !a.NoPair {
		mat.NewDense(a.D, k, r.Z2).Mul(mat.NewDense(a.D, a.K, a.Z2), c)
	} else {
		r.NoPair, r.Z2 = true, nil
	}
	r.Basis = r.bc.fingerprint(w)
	return r
}

// TakeCubes gives a (without cubes: NoCubes) the cube sums of s, a pass
// whitened by the same W over the cubes' documents (every document, or a
// sample's: then s.Cubes and Presampled or not). a then holds what one pass
// with cubes would have gathered, to rounding.
func (a *TripleAcc) TakeCubes(s *TripleAcc) error {
	switch {
	case !a.NoCubes || s.NoCubes:
		return fmt.Errorf("implicit: TakeCubes needs statistics without cubes and a pass with them")
	case s.D != a.D || s.K != a.K || s.Basis != a.Basis:
		return fmt.Errorf("implicit: TakeCubes of cubes whitened by another W (d=%d, k=%d) than the statistics' (d=%d, k=%d)", s.D, s.K, a.D, a.K)
	}
	a.NoCubes, a.Y3, a.Cubes = false, s.Y3, s.Cubes
	a.CubeSq = nil
	if s.CubeSq != nil {
		a.CubeSq = []float64{s.CubeSq[0]}
	}
	return nil
}
