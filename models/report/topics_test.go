package report

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/streamfit/streamfit/models"
)

// randomTopics draws k distributions over d words, with some exact zeros.
func randomTopics(r *rand.Rand, k, d int) [][]float64 {
	out := make([][]float64, k)
	for t := range out {
		row := make([]float64, d)
		var s float64
		for w := range row {
			if r.Float64() < 0.2 {
				continue
			}
			row[w] = math.Pow(r.Float64(), 4)
			s += row[w]
		}
		for w := range row {
			row[w] /= s
		}
		out[t] = row
	}
	return out
}

// TestJSDistances compares the one-logarithm form with the definition
// JSD = ½KL(p‖m) + ½KL(q‖m).
func TestJSDistances(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	topics := randomTopics(r, 6, 300)
	got := jsDistances(topics)
	for s := range topics {
		for u := range topics {
			var js float64
			for w := range topics[s] {
				p, q := topics[s][w], topics[u][w]
				m := (p + q) / 2
				if p > 0 {
					js += p * math.Log(p/m) / 2
				}
				if q > 0 {
					js += q * math.Log(q/m) / 2
				}
			}
			// Cancellation in Σp log p + Σq log q − 2Σm log m loses a few
			// ulps of terms of size 1; 1e-7 on a distance of order 0.5 is
			// far below what the map can show.
			if want := math.Sqrt(js); math.Abs(got.At(s, u)-want) > 1e-7 {
				t.Errorf("distance(%d,%d) = %g, want %g", s, u, got.At(s, u), want)
			}
		}
	}
}

// TestScale2 places points that lie in a plane and checks that their
// pairwise distances are kept.
func TestScale2(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	k := 9
	px, py := make([]float64, k), make([]float64, k)
	for i := range k {
		px[i], py[i] = r.NormFloat64()*3, r.NormFloat64()
	}
	dist := func(x, y []float64, i, j int) float64 { return math.Hypot(x[i]-x[j], y[i]-y[j]) }
	d := jsDistances(make([][]float64, k)) // a k×k zero matrix
	for i := range k {
		for j := i + 1; j < k; j++ {
			d.SetSym(i, j, dist(px, py, i, j))
		}
	}
	x, y := scale2(d)
	for i := range k {
		for j := range k {
			if g, w := dist(x, y, i, j), dist(px, py, i, j); math.Abs(g-w) > 1e-9 {
				t.Errorf("distance(%d,%d) = %g after scaling, want %g", i, j, g, w)
			}
		}
	}
	// One point and two points: no eigen-decomposition to fail.
	for k := 1; k <= 2; k++ {
		d := jsDistances(make([][]float64, k))
		if k == 2 {
			d.SetSym(0, 1, 2)
		}
		x, y := scale2(d)
		if k == 2 && math.Abs(math.Abs(x[0]-x[1])-2) > 1e-12 || y[0] != 0 {
			t.Errorf("k=%d: placed at x=%v y=%v", k, x, y)
		}
	}
}

// TestCandidates checks the candidate words against a brute-force ranking
// of the whole vocabulary at every step of the slider: the page's top words
// (the candidates' top TopWords) are the vocabulary's top words.
func TestCandidates(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 2 {
		k, d := 5, 2000
		topics := randomTopics(r, k, d)
		pi := models.TopicWeights(5, []float64{1, 2, 3, 0.5, 1.5})
		p := make([]float64, d)
		for s, row := range topics {
			for w, x := range row {
				p[w] += pi[s] * x
			}
		}
		for s := range topics {
			phi := topics[s]
			cand := candidates(phi, p)
			if len(cand) > d/4 {
				t.Errorf("trial %d topic %d: %d candidates of %d words", trial, s, len(cand), d)
			}
			for step := 0; step <= lambdaSteps; step++ {
				lam := float64(step) / lambdaSteps
				rel := func(w int) float64 { return lam*math.Log(phi[w]) + (1-lam)*math.Log(phi[w]/p[w]) }
				top := func(words []int) []int {
					ws := slices.Clone(words)
					sort.SliceStable(ws, func(a, b int) bool { return rel(ws[a]) > rel(ws[b]) })
					return ws[:min(TopWords, len(ws))]
				}
				var all []int
				for w := range phi {
					if phi[w] > 0 {
						all = append(all, w)
					}
				}
				want, got := top(all), top(cand)
				slices.Sort(want)
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("trial %d topic %d λ=%.2f: candidates give %v, the vocabulary %v", trial, s, lam, got, want)
				}
			}
		}
	}
}
