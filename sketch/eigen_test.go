package sketch

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// lowRankPlusNoise builds A = Σ λᵢ uᵢuᵢᵀ + ε·N with decaying λ and a small
// symmetric noise N, the shape of an estimated moment matrix.
func lowRankPlusNoise(d, k int, eps float64, seed uint64) *mat.SymDense {
	r := rand.New(rand.NewPCG(seed, 1))
	g := mat.NewDense(d, k, nil)
	for i := range d {
		for j := range k {
			g.Set(i, j, r.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	a := mat.NewSymDense(d, nil)
	for j := range k {
		lam := 10 / float64(j+1)
		u := q.ColView(j)
		a.SymRankOne(a, lam, u)
	}
	for i := range d {
		for j := i; j < d; j++ {
			a.SetSym(i, j, a.At(i, j)+eps*r.NormFloat64())
		}
	}
	return a
}

// maxAngleSin is the sine of the largest principal angle between the column
// spaces of orthonormal a and b: ‖(I − aaᵀ) b‖₂.
func maxAngleSin(a, b *mat.Dense) float64 {
	var p, r mat.Dense
	p.Mul(a.T(), b)
	r.Mul(a, &p)
	r.Sub(b, &r)
	return mat.Norm(&r, 2)
}

func TestTopEigenAgainstDense(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		d, k        int
		eps         float64
		opt         Options
		valTol, sin float64
	}{
		// Exact path: identical to the dense answer up to rounding.
		{"exact", 60, 5, 1e-3, Options{ExactDim: 100}, 1e-10, 1e-8},
		// Randomized, no noise: the range is captured exactly.
		{"randomized-exact-rank", 300, 8, 0, Options{Seed: 3}, 1e-9, 1e-8},
		// Randomized with noise and no power pass: the oversampled range misses
		// a part of size about ‖noise‖/gap (2ε√d ≈ 0.035 against a gap of 0.14
		// near the 8th eigenvalue), hence the loose tolerance.
		{"randomized-noisy", 300, 8, 1e-3, Options{Seed: 4}, 1e-2, 0.25},
		{"randomized-power", 300, 8, 1e-3, Options{Seed: 5, PowerIters: 2}, 1e-4, 1e-2},
		// Nyström with the same two products: about one power step better
		// than Rayleigh–Ritz (sine 0.12 above). Its eigenvalues are those of
		// the approximation, biased by about ‖noise‖²/λ.
		{"randomized-nystrom", 300, 8, 1e-3, Options{Seed: 4, Nystrom: true}, 5e-3, 0.05},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := lowRankPlusNoise(tc.d, tc.k, tc.eps, 7)
			res, err := TopEigen(ctx, Dense{a}, tc.k, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			want, wantVecs, err := topSym(a, tc.k)
			if err != nil {
				t.Fatal(err)
			}
			for j := range tc.k {
				if e := math.Abs(res.Values[j]-want[j]) / want[j]; e > tc.valTol {
					t.Errorf("eigenvalue %d: got %g want %g (rel err %.2g)", j, res.Values[j], want[j], e)
				}
			}
			if s := maxAngleSin(wantVecs, res.Vectors); s > tc.sin {
				t.Errorf("subspace angle sine %.3g > %g", s, tc.sin)
			}
			wantProducts := 2 + tc.opt.PowerIters
			if tc.opt.ExactDim >= tc.d {
				wantProducts = 1
			}
			if res.Products != wantProducts || res.Exact != (tc.opt.ExactDim >= tc.d) {
				t.Errorf("products=%d exact=%v", res.Products, res.Exact)
			}
		})
	}
}

func TestTopEigenDeterministic(t *testing.T) {
	a := lowRankPlusNoise(100, 4, 1e-3, 9)
	r1, err := TopEigen(context.Background(), Dense{a}, 4, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := TopEigen(context.Background(), Dense{a}, 4, Options{Seed: 1})
	if !mat.Equal(r1.Vectors, r2.Vectors) {
		t.Fatal("same seed gave different vectors")
	}
}

func TestTopEigenRank(t *testing.T) {
	a := mat.NewSymDense(50, nil) // zero operator
	if _, err := TopEigen(context.Background(), Dense{a}, 3, Options{}); err != ErrRank {
		t.Fatalf("err = %v, want ErrRank", err)
	}
	if _, err := TopEigen(context.Background(), Dense{a}, 51, Options{}); err == nil {
		t.Fatal("k > d accepted")
	}
}

// TestRitzTellsSign: on an indefinite matrix whose largest eigenvalue in
// magnitude is negative (as the second moment of real text has), the top
// singular vectors of A·q take the negative direction, while Ritz on the
// same span orders the eigenvalues algebraically and its first vectors are
// the positive eigenvectors; RangeBasisCols' two parts are orthonormal,
// orthogonal to each other, and span the sketch's range.
func TestRitzTellsSign(t *testing.T) {
	const d = 40
	r := rand.New(rand.NewPCG(5, 6))
	// A = U diag(λ) Uᵀ with λ = (−9, 5, 4, 3, 0.01, …) in a random basis.
	u := Gaussian(d, d, 9)
	var qr mat.QR
	qr.Factorize(u)
	var ub mat.Dense
	qr.QTo(&ub)
	lam := make([]float64, d)
	lam[0], lam[1], lam[2], lam[3] = -9, 5, 4, 3
	for i := 4; i < d; i++ {
		lam[i] = 0.01 * r.NormFloat64()
	}
	var scaled, a mat.Dense
	scaled.Apply(func(_, j int, v float64) float64 { return v * lam[j] }, &ub)
	a.Mul(&scaled, ub.T())
	y := mat.NewDense(d, 6, nil)
	y.Mul(&a, Gaussian(d, 6, 3))
	top, rest, sv, err := RangeBasisCols(y, 3, 6)
	if err != nil {
		t.Fatal(err)
	}
	if _, c := rest.Dims(); c != 3 || len(sv) != 6 {
		t.Fatalf("rest has %d columns, %d singular values", c, len(sv))
	}
	var both mat.Dense
	both.Augment(top, rest)
	var gram mat.Dense
	gram.Mul(both.T(), &both)
	for i := range 6 {
		for j := range 6 {
			if want := b2f(i == j); math.Abs(gram.At(i, j)-want) > 1e-10 {
				t.Fatalf("[q rest] not orthonormal: (%d,%d) = %g", i, j, gram.At(i, j))
			}
		}
	}
	// The top singular vectors of the sketch take the negative direction.
	var proj mat.VecDense
	proj.MulVec(top.T(), ub.ColView(0))
	if n := mat.Norm(&proj, 2); n < 0.9 {
		t.Fatalf("the top 3 singular vectors hold only %.3f of the −9 eigenvector", n)
	}
	aq := mat.NewDense(d, 6, nil)
	aq.Mul(&a, &both)
	vals, coef, err := Ritz(&both, aq, 3)
	if err != nil {
		t.Fatal(err)
	}
	vecs := RitzVectors(&both, coef)
	for i, want := range []float64{5, 4, 3} {
		if math.Abs(vals[i]-want) > 0.05 {
			t.Errorf("Ritz value %d: %g, want ≈ %g (all %v)", i, vals[i], want, vals)
		}
		if c := math.Abs(mat.Dot(vecs.ColView(i), ub.ColView(i+1))); c < 0.99 {
			t.Errorf("Ritz vector %d has |cos| %.3f with its eigenvector", i, c)
		}
	}
	if last := vals[len(vals)-1]; math.Abs(last+9) > 0.05 {
		t.Errorf("smallest Ritz value %g, want ≈ −9", last)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
