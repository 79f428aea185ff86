package solver

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// unitFactors returns r independent uniform unit vectors in R^d.
func unitFactors(d, r int, rng *rand.Rand) *mat.Dense {
	m := randDense(d, r, rng)
	normalizeCols(m)
	return m
}

// coherentFactors returns r ≤ d unit vectors that are an orthonormal set
// perturbed by mu·(uniform unit vector): non-orthogonal but well conditioned,
// so first-order error bounds (∝ ‖U⁻¹‖³) stay small. Square random Gaussian
// factor matrices can have condition numbers in the hundreds, where every
// method's error is amplified by 10⁶.
func coherentFactors(d, r int, mu float64, rng *rand.Rand) *mat.Dense {
	m := orthoFactors(d, r, rng)
	p := unitFactors(d, r, rng)
	m.Add(m, scaled(mu, p))
	normalizeCols(m)
	return m
}

func scaled(a float64, m *mat.Dense) *mat.Dense {
	var s mat.Dense
	s.Scale(a, m)
	return &s
}

func TestJointDiag(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(20, 21))
	for _, tc := range []struct {
		name     string
		method   JDMethod
		d, r     int
		ortho    bool
		twoStage bool
	}{
		{"ojd0 full", Orthogonal, 8, 8, true, false},
		{"ojd1 low rank", Orthogonal, 10, 3, true, true},
		{"nojd0 full", NonOrthogonal, 6, 6, false, false},
		{"nojd1 full", NonOrthogonal, 8, 8, false, true},
		{"nojd1 low rank", NonOrthogonal, 10, 4, false, true},
	} {
		var v *mat.Dense
		if tc.ortho {
			v = orthoFactors(tc.d, tc.r, rng)
		} else {
			v = coherentFactors(tc.d, tc.r, 0.5, rng)
		}
		w := make([]float64, tc.r)
		for i := range w {
			w[i] = 1 + rng.Float64()
		}
		T := FromFactors(w, v)
		res, err := JointDiag(ctx, T, tc.r, Options{Seed: 4}, tc.method, tc.twoStage)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// Exact slices: the sweeps stop at Tol = 1e-10 in the step size or
		// when the off-diagonal energy stalls at rounding level.
		checkRecovery(t, tc.name, v, w, res, 1e-6, 1e-6)
		imp, err := JointDiag(ctx, applyOnly{T}, tc.r, Options{Seed: 4}, tc.method, tc.twoStage)
		if err != nil {
			t.Fatalf("%s implicit: %v", tc.name, err)
		}
		checkRecovery(t, tc.name+" implicit", v, w, imp, 1e-6, 1e-6)

		// With noise the error is first order in ε ([003] Lemma 1/2).
		eps := 1e-3
		T.AddTensor(symNoise(tc.d, eps, rng))
		noisy, err := JointDiag(ctx, T, tc.r, Options{Seed: 4}, tc.method, tc.twoStage)
		if err != nil {
			t.Fatalf("%s noisy: %v", tc.name, err)
		}
		checkRecovery(t, tc.name+" noisy", v, w, noisy, 100*eps, 100*eps)
	}
}

func TestJointDiagErrors(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(22, 23))
	v := orthoFactors(5, 2, rng)
	T := FromFactors([]float64{1, 2}, v)
	if _, err := JointDiag(ctx, T, 6, Options{}, Orthogonal, true); !errors.Is(err, ErrRank) {
		t.Fatalf("rank > dim: %v", err)
	}
	if _, err := JointDiag(ctx, T, 4, Options{}, Orthogonal, false); !errors.Is(err, ErrDegenerate) {
		t.Fatalf("rank above the tensor's: %v", err)
	}
	if _, err := JointDiag(ctx, NewSym3(4), 2, Options{}, NonOrthogonal, false); !errors.Is(err, ErrDegenerate) {
		t.Fatalf("zero tensor: %v", err)
	}
}
