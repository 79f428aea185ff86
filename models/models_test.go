package models

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestProjectSimplex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for trial := range 200 {
		n := 1 + r.IntN(20)
		v := make([]float64, n)
		for i := range v {
			v[i] = r.NormFloat64()
		}
		p := append([]float64(nil), v...)
		ProjectSimplex(p)
		s := 0.0
		for _, x := range p {
			if x < 0 {
				t.Fatalf("trial %d: negative entry %g", trial, x)
			}
			s += x
		}
		if math.Abs(s-1) > 1e-12 {
			t.Fatalf("trial %d: sums to %g", trial, s)
		}
		// Optimality (KKT): p − v = −τ + ν with ν ≥ 0 only where p = 0, so
		// v − p is the same constant τ on the support and ≤ τ off it.
		tau := math.NaN()
		for i := range p {
			if p[i] > 0 {
				if math.IsNaN(tau) {
					tau = v[i] - p[i]
				} else if math.Abs(v[i]-p[i]-tau) > 1e-12 {
					t.Fatalf("trial %d: not a projection (τ varies)", trial)
				}
			}
		}
		for i := range p {
			if p[i] == 0 && v[i] > tau+1e-12 {
				t.Fatalf("trial %d: zeroed entry %g above τ=%g", trial, v[i], tau)
			}
		}
	}
	// A distribution is its own projection.
	d := []float64{0.2, 0.3, 0.5}
	if moved := ProjectSimplex(d); moved > 1e-15 || d[2] != 0.5 {
		t.Fatalf("moved a distribution: %v (%g)", d, moved)
	}
}

// TestAssignBruteForce compares the Hungarian algorithm with every
// permutation on small random (and rectangular) problems.
func TestAssignBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for trial := range 300 {
		n := 1 + r.IntN(6)
		m := n + r.IntN(3)
		cost := make([][]float64, n)
		for i := range cost {
			cost[i] = make([]float64, m)
			for j := range cost[i] {
				cost[i][j] = float64(r.IntN(10)) // ties on purpose
			}
		}
		match, err := Assign(cost)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		got := 0.0
		for i, j := range match {
			if seen[j] {
				t.Fatalf("trial %d: column %d used twice", trial, j)
			}
			seen[j] = true
			got += cost[i][j]
		}
		if best := bruteAssign(cost, 0, make([]bool, m)); got != best {
			t.Fatalf("trial %d: cost %g, optimum %g", trial, got, best)
		}
	}
	if _, err := Assign([][]float64{{1}, {2}}); err == nil {
		t.Fatal("more rows than columns accepted")
	}
}

func bruteAssign(cost [][]float64, i int, used []bool) float64 {
	if i == len(cost) {
		return 0
	}
	best := math.Inf(1)
	for j := range used {
		if !used[j] {
			used[j] = true
			best = math.Min(best, cost[i][j]+bruteAssign(cost, i+1, used))
			used[j] = false
		}
	}
	return best
}

func TestEvaluate(t *testing.T) {
	truth := &Model{Model: "lda", K: 3, D: 4, Alpha0: 1, Alpha: []float64{0.2, 0.3, 0.5},
		Topics: [][]float64{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 0.5, 0.5}}}
	fit := &Model{Model: "lda", K: 3, D: 4, Alpha0: 1, Alpha: []float64{0.5, 0.2, 0.3},
		Topics: [][]float64{{0, 0, 0.6, 0.4}, {0.9, 0.1, 0, 0}, {0, 1, 0, 0}}}
	ev, err := Evaluate(fit, truth)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ev.Match, []int{2, 0, 1}) || ev.Found != 3 {
		t.Fatalf("match %v found %d", ev.Match, ev.Found)
	}
	if math.Abs(ev.MeanL1-0.4/3) > 1e-12 || math.Abs(ev.MaxL1-0.2) > 1e-12 || ev.AlphaRelErr != 0 {
		t.Fatalf("mean %g max %g α err %g", ev.MeanL1, ev.MaxL1, ev.AlphaRelErr)
	}
	// More fitted than true topics: the extra one is unmatched.
	fit.K, fit.Topics, fit.Alpha = 4, append(fit.Topics, []float64{0.25, 0.25, 0.25, 0.25}), append(fit.Alpha, 0.1)
	ev, err = Evaluate(fit, truth)
	if err != nil || ev.Match[3] != -1 || ev.Found != 3 {
		t.Fatalf("extra topic: %+v %v", ev, err)
	}
}

func TestModelFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.json")
	m := &Model{Model: "topic", K: 2, D: 3, Alpha: []float64{0.4, 0.6},
		Topics: [][]float64{{0.5, 0.5, 0}, {0, 0.25, 0.75}}, Vocab: []string{"a", "b", "c"},
		Fit: &FitRecord{Docs: 10, Passes: 3, M2Eigenvalues: []float64{2, 1}}}
	if err := m.Write(path); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("read back %+v", got)
	}
	// A plan record (a struct whose fields are not in alphabetical
	// order) is kept as written: read and written again, the same bytes.
	type plan struct {
		Third  string `json:"third"`
		Auto   bool   `json:"auto"`
		Solver string `json:"solver"`
	}
	withPlan := *m
	fit := *m.Fit
	fit.Plan = &plan{Third: "explicit", Auto: true, Solver: "rtpm"}
	withPlan.Fit = &fit
	again := filepath.Join(dir, "again.json")
	if err := withPlan.Write(path); err != nil {
		t.Fatal(err)
	}
	if got, err = Read(path); err != nil {
		t.Fatal(err)
	}
	if err := got.Write(again); err != nil {
		t.Fatal(err)
	}
	if a, b := readBytes(t, path), readBytes(t, again); !bytes.Equal(a, b) {
		t.Fatalf("a model read and written again changed:\n%s\n%s", a, b)
	}
	bad := *m
	bad.Topics = [][]float64{{0.5, 0.4, 0}, {0, 0.25, 0.75}}
	if err := bad.Write(filepath.Join(dir, "bad.json")); err == nil || !strings.Contains(err.Error(), "sums to") {
		t.Fatalf("invalid model written: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.json")); !os.IsNotExist(err) {
		t.Fatal("invalid model left a file")
	}
	os.WriteFile(filepath.Join(dir, "trunc.json"), []byte(`{"model":"lda","k":2`), 0o644)
	if _, err := Read(filepath.Join(dir, "trunc.json")); err == nil || !strings.Contains(err.Error(), "not a model file") {
		t.Fatalf("truncated file: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file left behind: %s", e.Name())
		}
	}
}

// TestProjectSimplexBruteForce compares ProjectSimplex with a search over
// every face of the simplex: the projection of v lies in the relative
// interior of one face S, where it is the projection onto S's affine hull
// (pᵢ = vᵢ − τ on S, τ = (Σ_S v − 1)/|S|, 0 elsewhere); of the faces whose
// candidate is feasible, the nearest to v gives the projection. The vectors
// are raw topic estimates in miniature: mostly positive, some negative
// entries, sums away from 1.
func TestProjectSimplexBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for trial := range 500 {
		n := 1 + r.IntN(8)
		v := make([]float64, n)
		for i := range v {
			v[i] = r.Float64()*0.6 - 0.15
			if r.IntN(4) == 0 {
				v[i] = -r.Float64()
			}
		}
		var best []float64
		bestDist := math.Inf(1)
		for set := 1; set < 1<<n; set++ {
			var sum float64
			size := 0
			for i := range n {
				if set&(1<<i) != 0 {
					sum += v[i]
					size++
				}
			}
			tau := (sum - 1) / float64(size)
			p := make([]float64, n)
			ok := true
			var dist float64
			for i := range n {
				if set&(1<<i) != 0 {
					p[i] = v[i] - tau
					ok = ok && p[i] >= 0
				}
				dist += (p[i] - v[i]) * (p[i] - v[i])
			}
			if ok && dist < bestDist {
				best, bestDist = p, dist
			}
		}
		p := append([]float64(nil), v...)
		moved := ProjectSimplex(p)
		var l1 float64
		for i := range p {
			if math.Abs(p[i]-best[i]) > 1e-12 {
				t.Fatalf("trial %d: projection of %v is %v, brute force %v", trial, v, p, best)
			}
			l1 += math.Abs(best[i] - v[i])
		}
		if math.Abs(moved-l1) > 1e-12 {
			t.Fatalf("trial %d: reported ℓ1 moved %g, brute force %g", trial, moved, l1)
		}
	}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
