package multiview

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/bench/models/memtest"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream/synth"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// blockPass hands the triples (x1[i], x2[i], x3[i]) to fn in blocks of 7,
// round-robin over the workers.
func blockPass(x [3]*mat.Dense) Pass {
	return func(ctx context.Context, workers int, fn func(int, blas64.General, blas64.General, blas64.General) error) error {
		n, _ := x[0].Dims()
		for lo, b := 0, 0; lo < n; lo, b = lo+7, b+1 {
			hi := min(lo+7, n)
			var g [3]blas64.General
			for t := range 3 {
				g[t] = mat.DenseCopyOf(x[t].Slice(lo, hi, 0, x[t].RawMatrix().Cols)).RawMatrix()
			}
			if err := fn(b%workers, g[0], g[1], g[2]); err != nil {
				return err
			}
		}
		return nil
	}
}

// The streamed cross moments and the whitened, symmetrised third moment equal
// the explicit averages over the triples (rounding-level tolerance).
func TestMomentsBruteForce(t *testing.T) {
	const n, k = 50, 2
	dims := [3]int{3, 4, 2}
	r := rand.New(rand.NewPCG(3, 9))
	var x, p [3]*mat.Dense
	for v, d := range dims {
		x[v] = mat.NewDense(n, d, nil)
		p[v] = mat.NewDense(d, k, nil)
		for i := range n {
			for j := range d {
				x[v].Set(i, j, r.NormFloat64()+float64(j))
			}
		}
		for i := range d {
			for j := range k {
				p[v].Set(i, j, r.NormFloat64())
			}
		}
	}
	pass := blockPass(x)
	e12, e32, e31, got, err := CrossMoments(context.Background(), pass, dims, 3)
	if err != nil || got != n {
		t.Fatal(err, got)
	}
	var worst float64
	for _, c := range []struct {
		e    *mat.Dense
		a, b int
	}{{e12, 0, 1}, {e32, 2, 1}, {e31, 2, 0}} {
		for i := range dims[c.a] {
			for j := range dims[c.b] {
				var s float64
				for l := range n {
					s += x[c.a].At(l, i) * x[c.b].At(l, j) / n
				}
				worst = math.Max(worst, math.Abs(s-c.e.At(i, j)))
			}
		}
	}
	tt, got, err := whitenedTriple(context.Background(), pass, p[0], p[1], p[2], 2)
	if err != nil || got != n {
		t.Fatal(err, got)
	}
	var z [3]mat.Dense
	for v := range 3 {
		z[v].Mul(x[v], p[v])
	}
	raw := func(a, b, c int) float64 {
		var s float64
		for l := range n {
			s += z[0].At(l, a) * z[1].At(l, b) * z[2].At(l, c) / n
		}
		return s
	}
	for a := range k {
		for b := range k {
			for c := range k {
				sym := (raw(a, b, c) + raw(a, c, b) + raw(b, a, c) + raw(b, c, a) + raw(c, a, b) + raw(c, b, a)) / 6
				worst = math.Max(worst, math.Abs(sym-tt.At(a, b, c)))
			}
		}
	}
	if worst > 1e-12 {
		t.Errorf("streamed and brute-force moments differ by %g", worst)
	}
}

// 004 Prop 3.3: a spherical GMM whose means lie on the first three
// coordinate axes has, split into views as it is, views with rank-deficient
// mean matrices (two views see no signal), and the three-view method fails;
// after a random rotation every view sees all k means, and the mean matrix
// reassembled in the original coordinates is recovered.
func TestRotateGMM(t *testing.T) {
	src, err := synth.NewGMM(synth.GMMConfig{Rows: 80000, D: 12, K: 3, Sep: 6, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	// Put the means on the first three axes: μᵢ = 6eᵢ (the generator
	// shares these slices).
	for i := range src.Truth.Means {
		for j := range 12 {
			src.Truth.Means[i][j] = 0
		}
		src.Truth.Means[i][i] = 6
	}
	if _, err := Fit(context.Background(), src, Config{K: 3, Seed: 1}); err == nil {
		t.Error("the unrotated equal split of axis-aligned means should fail (views 2 and 3 carry no signal)")
	}
	m, err := Fit(context.Background(), src, Config{K: 3, Rotate: true, Seed: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	cost := make([][]float64, 3)
	for i := range 3 {
		cost[i] = make([]float64, 3)
		for j := range 3 {
			for l := range 12 {
				d := src.Truth.Means[i][l] - m.Components[j][l]
				cost[i][j] += d * d
			}
		}
	}
	perm, err := models.Assign(cost)
	if err != nil {
		t.Fatal(err)
	}
	diff, ref := mat.NewDense(12, 3, nil), mat.NewDense(12, 3, nil)
	var werr float64
	for i, j := range perm {
		for l := range 12 {
			diff.Set(l, i, m.Components[j][l]-src.Truth.Means[i][l])
			ref.Set(l, i, src.Truth.Means[i][l])
		}
		werr += math.Abs(m.Weights[j] - src.Truth.Weights[i])
	}
	rel := mat.Norm(diff, 2) / mat.Norm(ref, 2)
	t.Logf("rotated: component means rel err %.4f, weights ℓ1 %.4f", rel, werr)
	if rel > 0.05 || werr > 0.05 {
		t.Errorf("component means error %.4f, weights ℓ1 %.4f; want ≤ 0.05", rel, werr)
	}
	if _, err := Eval(m, &Model{Model: "multiview", K: 3, D: 12, Views: m.Views, Weights: m.Weights, Means: m.Means}); err == nil || !strings.Contains(err.Error(), "rotated") {
		t.Errorf("eval of a rotated fit against an unrotated truth: %v", err)
	}
}

// A fit whose views differ from the truth's gets an error naming both and
// the Views value that would match.
func TestEvalMismatchedViews(t *testing.T) {
	mk := func(views [][]int) *Model {
		m := &Model{Model: "multiview", K: 1, D: 6, Views: views, Weights: []float64{1}, Means: make([][][]float64, 3)}
		for v := range 3 {
			m.Means[v] = [][]float64{make([]float64, len(views[v]))}
		}
		return m
	}
	_, err := Eval(mk([][]int{{0, 1}, {2, 3}, {4, 5}}), mk([][]int{{0, 2}, {1, 3}, {4, 5}}))
	if err == nil || !strings.Contains(err.Error(), `Views "0,2;1,3;4,5"`) || !strings.Contains(err.Error(), "view 1") {
		t.Errorf("got %v", err)
	}
}

func TestMemoryIndependentOfRows(t *testing.T) {
	memtest.Check(t, 10000, 2<<20, func(rows int64) error {
		src, err := synth.NewMultiView(synth.MultiViewConfig{Rows: rows, Dims: [3]int{10, 12, 14}, K: 3, Seed: 2, BatchRows: 256, Workers: 1})
		if err != nil {
			return err
		}
		_, err = Fit(context.Background(), src, Config{K: 3, Views: src.Truth.Views, Seed: 1})
		return err
	})
}
