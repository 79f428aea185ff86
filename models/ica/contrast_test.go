package ica_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models/ica"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// heavyTailed returns n rows of k Laplace sources (unit variance) mixed by
// a random d×k matrix of condition below 5, and the truth.
func heavyTailed(n, d, k int, seed uint64) (*stream.MemoryDense, *ica.Model) {
	r := rand.New(rand.NewPCG(seed, 7))
	var a *mat.Dense
	for {
		a = mat.NewDense(d, k, nil)
		for i := range d {
			for j := range k {
				a.Set(i, j, r.NormFloat64())
			}
		}
		var sv mat.SVD
		sv.Factorize(a, mat.SVDNone)
		v := sv.Values(nil)
		if v[0]/v[k-1] < 5 {
			break
		}
	}
	data := make([]float64, n*d)
	h := make([]float64, k)
	for row := range n {
		for j := range h {
			h[j] = r.ExpFloat64() / math.Sqrt2
			if r.IntN(2) == 0 {
				h[j] = -h[j]
			}
		}
		for i := range d {
			var x float64
			for j, v := range h {
				x += a.At(i, j) * v
			}
			data[row*d+i] = x
		}
	}
	truth := &ica.Model{Model: "ica", K: k, D: d, Mixing: make([][]float64, k), Kurtosis: make([]float64, k)}
	for j := range k {
		truth.Mixing[j] = mat.Col(nil, j, a)
		truth.Kurtosis[j] = 3 // Laplace
	}
	return &stream.MemoryDense{All: &stream.Dense{Rows: n, Cols: d, Data: data}, BatchRows: 1000}, truth
}

// On heavy-tailed sources the logcosh contrast's estimate has a smaller
// variance than the fourth cumulant's (whose estimate a few large values
// dominate): over several draws its mixing error is the smaller on average,
// and its answer is a fixed point of the logcosh step, checked here against
// the rows themselves.
func TestLogcoshOnHeavyTails(t *testing.T) {
	const n, d, k, draws = 20000, 4, 4, 6
	var errL, errK float64
	for s := range uint64(draws) {
		src, truth := heavyTailed(n, d, k, s+1)
		var fits [2]*ica.Model
		for i, contrast := range []string{ica.ContrastLogcosh, ica.ContrastKurtosis} {
			m, err := ica.Fit(context.Background(), src, ica.Config{K: k, Seed: 3, Contrast: contrast})
			if err != nil {
				t.Fatal(err)
			}
			ev, err := ica.Eval(m, truth)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				errL += ev.Mixing / draws
			} else {
				errK += ev.Mixing / draws
			}
			fits[i] = m
		}
		t.Logf("draw %d: logcosh took %d steps", s, fits[0].Fit.RefineIters)
		if s == 0 {
			// The check tells the two answers apart: the cumulant's
			// is not logcosh's fixed point.
			if r := logcoshAsymmetry(t, src, fits[0]); r > 1e-4 {
				t.Errorf("ΘᵀG is not symmetric (‖ΘᵀG − GᵀΘ‖/‖ΘᵀG‖ = %.2g): the fitted columns are not a fixed point of the logcosh step", r)
			}
			if r := logcoshAsymmetry(t, src, fits[1]); r < 1e-3 {
				t.Errorf("the kurtosis fit's columns give ‖ΘᵀG − GᵀΘ‖/‖ΘᵀG‖ = %.2g, as if a fixed point of the logcosh step", r)
			}
		}
	}
	t.Logf("mean mixing error over %d draws: logcosh %.4f, kurtosis %.4f", draws, errL, errK)
	if !(errL < errK) {
		t.Errorf("logcosh's mean mixing error %.4f is not below kurtosis's %.4f on Laplace sources", errL, errK)
	}
}

// logcoshAsymmetry recomputes, from the rows, the whitened columns
// θᵢ of m (θᵢ ∝ C^{-1/2}aᵢ, exact path with k = d and no noise: any
// whitening is this one rotated) and the logcosh step's
// Gᵢ = E[z tanh(θᵢᵀz)] − E[1 − tanh²(θᵢᵀz)]θᵢ. The symmetric step's fixed
// points, θ = G(GᵀG)^{-1/2}, are where ΘᵀG is symmetric (the stationarity
// of the contrast over orthonormal Θ); it returns ‖ΘᵀG − GᵀΘ‖/‖ΘᵀG‖.
// The steps stop at a move of 1e-8 (1 − |cos|), about 1e-5 here.
func logcoshAsymmetry(t *testing.T, src *stream.MemoryDense, m *ica.Model) float64 {
	t.Helper()
	n, d := src.All.Rows, src.All.Cols
	x := mat.NewDense(n, d, append([]float64(nil), src.All.Data...))
	mean := make([]float64, d)
	for i := range n {
		for j := range d {
			mean[j] += x.At(i, j) / float64(n)
		}
	}
	for i := range n {
		for j := range d {
			x.Set(i, j, x.At(i, j)-mean[j])
		}
	}
	var c mat.SymDense
	c.SymOuterK(1/float64(n), x.T())
	var es mat.EigenSym
	if !es.Factorize(&c, true) {
		t.Fatal("covariance")
	}
	vals := es.Values(nil)
	var u mat.Dense
	es.VectorsTo(&u)
	isq := mat.NewDense(d, d, nil)
	for i := range d {
		for j := range d {
			var s float64
			for l := range d {
				s += u.At(i, l) * u.At(j, l) / math.Sqrt(vals[l])
			}
			isq.Set(i, j, s)
		}
	}
	var z mat.Dense
	z.Mul(x, isq)
	k := len(m.Mixing)
	theta, g := mat.NewDense(d, k, nil), mat.NewDense(d, k, nil)
	for c, a := range m.Mixing {
		var th mat.VecDense
		th.MulVec(isq, mat.NewVecDense(d, a))
		th.ScaleVec(1/th.Norm(2), &th)
		theta.SetCol(c, th.RawVector().Data)
		var gp float64
		for i := range n {
			row := z.RawRowView(i)
			tt := math.Tanh(mat.Dot(mat.NewVecDense(d, row), &th))
			gp += (1 - tt*tt) / float64(n)
			for j := range d {
				g.Set(j, c, g.At(j, c)+row[j]*tt/float64(n))
			}
		}
		for j := range d {
			g.Set(j, c, g.At(j, c)-gp*th.AtVec(j))
		}
	}
	var mm, asym mat.Dense
	mm.Mul(theta.T(), g)
	asym.Sub(&mm, mm.T())
	return mat.Norm(&asym, 2) / mat.Norm(&mm, 2)
}

func TestContrastSettings(t *testing.T) {
	src, _ := heavyTailed(2000, 3, 3, 9)
	if _, err := ica.Fit(context.Background(), src, ica.Config{K: 3, Contrast: "negentropy"}); err == nil || !strings.Contains(err.Error(), `contrast "negentropy"`) {
		t.Errorf("an unknown contrast: got %v, want an error naming it", err)
	}
	// Statistics written before the contrast was a setting carry none in
	// their parameters: they are the fourth cumulant's.
	params, _ := json.Marshal(map[string]any{"refine": 2, "solver": "rtpm", "seed": 1})
	cfg, err := ica.ConfigFromStats(ica.Config{}, statsfile.Header{Model: "ica", Phase: 3, D: 3, K: 3, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Contrast != ica.ContrastKurtosis {
		t.Errorf("statistics without a contrast read as %q, want %q", cfg.Contrast, ica.ContrastKurtosis)
	}
}
