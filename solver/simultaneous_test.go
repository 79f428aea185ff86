package solver

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// countingTensor counts the Apply calls made on t: for a tensor streamed
// from disk each is one pass over the data.
type countingTensor struct {
	Tensor
	applies, cols int
}

func (c *countingTensor) Apply(ctx context.Context, dst, theta *mat.Dense) error {
	c.applies++
	_, l := theta.Dims()
	c.cols += l
	return c.Tensor.Apply(ctx, dst, theta)
}

// rowsTensor is the implicit sample third moment (1/n)Σ_s (y_sᵀθ)² y_s over
// the rows y_s of y, never forming the k×k×k tensor: the form of a
// streamed whitened moment.
type rowsTensor struct{ y *mat.Dense }

func (r rowsTensor) Dim() int { _, k := r.y.Dims(); return k }

func (r rowsTensor) Apply(_ context.Context, dst, theta *mat.Dense) error {
	n, _ := r.y.Dims()
	var g mat.Dense
	g.Mul(r.y, theta)
	g.Apply(func(_, _ int, v float64) float64 { return v * v / float64(n) }, &g)
	dst.Mul(r.y.T(), &g)
	return nil
}

func orthoWeights(r int, rng *rand.Rand) []float64 {
	w := make([]float64, r)
	for i := range w {
		w[i] = 1 + 4*rng.Float64()
	}
	return w
}

func TestSimultaneousNoiseless(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(21, 22))
	for _, tc := range []struct{ d, r int }{{8, 8}, {10, 4}, {30, 30}, {60, 60}} {
		v := orthoFactors(tc.d, tc.r, rng)
		w := orthoWeights(tc.r, rng)
		ct := &countingTensor{Tensor: FromFactors(w, v)}
		res, err := Simultaneous(ctx, ct, tc.r, Options{Seed: 3})
		if err != nil {
			t.Fatalf("d=%d r=%d: %v", tc.d, tc.r, err)
		}
		checkRecovery(t, "simultaneous", v, w, res, 1e-8, 1e-8)
		if !res.Converged || res.EigResidual > 1e-8 || res.Residual > 1e-6 {
			t.Fatalf("d=%d r=%d: converged %v (%s), eig residual %.3g, residual %.3g", tc.d, tc.r, res.Converged, res.Reason, res.EigResidual, res.Residual)
		}
		for i := 1; i < len(res.Weights); i++ {
			if res.Weights[i] > res.Weights[i-1] {
				t.Fatalf("weights not in decreasing order: %v", res.Weights)
			}
		}
		// Every contraction is counted, and the whole solve takes about one
		// phase of passes, not one per component.
		if res.Iters != ct.applies || ct.applies > defaultPowerIters+polishIters+1 {
			t.Fatalf("d=%d r=%d: %d applies, Iters %d", tc.d, tc.r, ct.applies, res.Iters)
		}
		rt := &countingTensor{Tensor: FromFactors(w, v)}
		if _, err := RTPM(ctx, rt, tc.r, Options{Seed: 3}); err != nil {
			t.Fatal(err)
		}
		t.Logf("d=%d r=%d: simultaneous %d applies (%d columns), rtpm %d applies (%d columns)", tc.d, tc.r, ct.applies, ct.cols, rt.applies, rt.cols)
		t.Logf("  solve iterations: %d", res.Iters)
		if tc.r >= 8 && 2*ct.applies > rt.applies {
			t.Fatalf("simultaneous made %d applies, rtpm %d", ct.applies, rt.applies)
		}
	}
}

// TestSimultaneousNoisy checks the perturbation bounds of Thm 5.1 (docs/MATH.md
// §4.2: ‖v − v̂‖ ≤ 8ε/λ, |λ − λ̂| ≤ 5ε) on noisy orthogonal tensors, as RTPM
// meets them.
func TestSimultaneousNoisy(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(31, 32))
	for _, tc := range []struct {
		d   int
		eps float64
	}{{10, 0.01}, {20, 0.05}, {40, 0.02}} {
		v := orthoFactors(tc.d, tc.d, rng)
		w := orthoWeights(tc.d, rng)
		T := FromFactors(w, v)
		T.AddTensor(symNoise(tc.d, tc.eps, rng))
		res, err := Simultaneous(ctx, T, tc.d, Options{Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		match, dist := MatchColumns(v, res.Factors)
		for i, j := range match {
			if j < 0 || dist[i] > 8*tc.eps/w[i] {
				t.Fatalf("d=%d eps=%g: factor %d distance %.3g > %.3g", tc.d, tc.eps, i, dist[i], 8*tc.eps/w[i])
			}
			if e := math.Abs(res.Weights[j] - w[i]); e > 5*tc.eps {
				t.Fatalf("d=%d eps=%g: weight %d error %.3g > %.3g", tc.d, tc.eps, i, e, 5*tc.eps)
			}
		}
		if !res.Converged {
			t.Fatalf("d=%d eps=%g: not converged: %s", tc.d, tc.eps, res.Reason)
		}
	}
}

// TestSimultaneousImplicitAgrees decomposes the same sample moment held
// explicitly (packed Sym3) and implicitly (rows): the answers agree to
// rounding.
func TestSimultaneousImplicitAgrees(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(41, 42))
	const k, n = 12, 3000
	v := orthoFactors(k, k, rng)
	y := mat.NewDense(n, k, nil)
	for s := range n {
		c := s % k
		a := 1 + 0.2*float64(c)
		for i := range k {
			y.Set(s, i, a*v.At(i, c)+0.02*rng.NormFloat64())
		}
	}
	wts := make([]float64, n)
	for i := range wts {
		wts[i] = 1 / float64(n)
	}
	ex := FromFactors(wts, mat.DenseCopyOf(y.T()))
	re, err := Simultaneous(ctx, ex, k, Options{Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	ri, err := Simultaneous(ctx, rowsTensor{y}, k, Options{Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(re.Factors, ri.Factors, 1e-9) {
		t.Fatalf("explicit and implicit factors differ:\n%v\n%v", mat.Formatted(re.Factors), mat.Formatted(ri.Factors))
	}
	for i := range re.Weights {
		if math.Abs(re.Weights[i]-ri.Weights[i]) > 1e-9*re.Weights[0] {
			t.Fatalf("weight %d: explicit %.12g implicit %.12g", i, re.Weights[i], ri.Weights[i])
		}
	}
	// And the components are the planted ones, weights a³/k.
	match, dist := MatchColumns(v, ri.Factors)
	for i, j := range match {
		a := 1 + 0.2*float64(i)
		if j < 0 || dist[i] > 0.05 || math.Abs(ri.Weights[j]-a*a*a/k)/(a*a*a/k) > 0.05 {
			t.Fatalf("component %d: distance %.3g, weight %.4g want %.4g", i, dist[i], ri.Weights[j], a*a*a/k)
		}
	}
}

func TestSimultaneousDeterministic(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(51, 52))
	const d = 15
	T := FromFactors(orthoWeights(d, rng), orthoFactors(d, d, rng))
	T.AddTensor(symNoise(d, 0.05, rng))
	a, err := Simultaneous(ctx, T, d, Options{Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Simultaneous(ctx, T, d, Options{Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(a.Factors, b.Factors) || a.Iters != b.Iters {
		t.Fatal("same seed and tensor gave different results")
	}
	for i := range a.Weights {
		if a.Weights[i] != b.Weights[i] {
			t.Fatal("same seed and tensor gave different weights")
		}
	}
}

func TestSimultaneousReports(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(61, 62))
	const d = 20
	T := FromFactors(orthoWeights(d, rng), orthoFactors(d, d, rng))
	T.AddTensor(symNoise(d, 0.05, rng))
	// One iteration cannot settle a block: reported as not converged, or
	// as an error when the capped blocks do not give d distinct
	// eigenvectors.
	res, err := Simultaneous(ctx, T, d, Options{Seed: 1, Iters: 1})
	switch {
	case err == nil && (res.Converged || res.Reason == ""):
		t.Fatalf("capped run reported converged (%q)", res.Reason)
	case err != nil && !errors.Is(err, ErrNoConvergence):
		t.Fatalf("capped run: %v", err)
	}
	if _, err := Simultaneous(ctx, T, d+1, Options{}); !errors.Is(err, ErrRank) {
		t.Fatalf("rank above dim: %v", err)
	}
	if _, err := Simultaneous(ctx, T, 0, Options{}); !errors.Is(err, ErrRank) {
		t.Fatalf("rank 0: %v", err)
	}
	// A rank-3 tensor asked for 5 components.
	low := FromFactors([]float64{3, 2, 1}, orthoFactors(d, 3, rng))
	res, err = Simultaneous(ctx, low, 5, Options{Seed: 2})
	if !errors.Is(err, ErrNonPositive) || res == nil || len(res.Weights) != 3 {
		t.Fatalf("rank-3 tensor, 5 components: %v (%v)", err, res)
	}
	// The registry knows it.
	f, err := ByName("simultaneous")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := f(ctx, T, d, Options{Seed: 1}); err != nil || len(res.Weights) != d {
		t.Fatalf("registered solver: %v", err)
	}
	// A cancelled context stops it.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Simultaneous(cctx, T, d, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// TestSimultaneousUnsettledUsesAnswer: on a tensor far from orthogonally
// decomposable (random non-orthogonal factors with weights of both signs,
// as the whitened moments of real text are), the iterations hit their cap
// and some columns are not eigenvectors; the solve then returns r distinct
// components with positive weights (a negative Rayleigh value is the same
// term with the sign on the factor), not converged, its Reason counting the
// columns used as found, as RTPM uses an unsettled start. Each weight is
// T(v,v,v) of its unit factor.
func TestSimultaneousUnsettledUsesAnswer(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	const k, r = 8, 8
	v := mat.NewDense(k, 12, nil)
	w := make([]float64, 12)
	for j := range 12 {
		var n float64
		for i := range k {
			x := rng.NormFloat64()
			v.Set(i, j, x)
			n += x * x
		}
		for i := range k {
			v.Set(i, j, v.At(i, j)/math.Sqrt(n))
		}
		w[j] = rng.NormFloat64()
	}
	T := FromFactors(w, v)
	res, err := Simultaneous(ctx, T, r, Options{Seed: 1, Iters: 5})
	if err != nil {
		t.Fatalf("unsettled solve refused: %v", err)
	}
	t.Logf("converged %v, reason %q", res.Converged, res.Reason)
	if res.Converged || len(res.Weights) != r || res.Unsettled == 0 {
		t.Fatalf("converged %v with %d components, want an unsettled answer of %d", res.Converged, len(res.Weights), r)
	}
	out := mat.NewDense(k, 1, nil)
	for i := range r {
		col := res.Factors.Slice(0, k, i, i+1).(*mat.Dense)
		if err := T.Apply(ctx, out, col); err != nil {
			t.Fatal(err)
		}
		lam := mat.Dot(out.ColView(0), col.ColView(0))
		if !(res.Weights[i] > 0) || math.Abs(lam-res.Weights[i]) > 1e-9*math.Max(1, lam) {
			t.Errorf("component %d: weight %g, T(v,v,v) %g", i, res.Weights[i], lam)
		}
		for j := range i {
			if c := math.Abs(mat.Dot(res.Factors.ColView(i), res.Factors.ColView(j))); c >= distinctCos {
				t.Errorf("components %d and %d have |cos| %.2f", j, i, c)
			}
		}
	}
}
