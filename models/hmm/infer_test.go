package hmm

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// tinyModel has three states over three symbols or coordinates, with
// transitions that make each step's posterior depend on both neighbours.
func tinyModel() *Model {
	return &Model{Model: "hmm", K: 3, D: 3,
		Pi: []float64{0.5, 0.3, 0.2},
		// Columns are the state before: T[i][j] = Pr(i | j).
		T: [][]float64{{0.7, 0.2, 0.1}, {0.2, 0.5, 0.3}, {0.1, 0.3, 0.6}},
		O: [][]float64{{0.6, 0.3, 0.1}, {0.2, 0.5, 0.3}, {0.1, 0.2, 0.7}},
	}
}

// bruteForce returns Pr(y_t = j | x) by summing the joint probability over
// every one of the kⁿ state paths; b(t, j) is the emission density.
func bruteForce(m *Model, n int, b func(t, j int) float64) [][]float64 {
	post := make([][]float64, n)
	for t := range post {
		post[t] = make([]float64, m.K)
	}
	path := make([]int, n)
	var total float64
	var walk func(t int, p float64)
	walk = func(t int, p float64) {
		if t == n {
			total += p
			for s, j := range path {
				post[s][j] += p
			}
			return
		}
		for j := range m.K {
			q := m.Pi[j]
			if t > 0 {
				q = m.T[j][path[t-1]]
			}
			path[t] = j
			walk(t+1, p*q*b(t, j))
		}
	}
	walk(0, 1)
	for _, row := range post {
		for j := range row {
			row[j] /= total
		}
	}
	return post
}

// collect runs Posteriors over rows in sequences ids and returns the
// shares by row, checking that each call covers one whole sequence.
func collect(t *testing.T, m *Model, data []float64, ids []int64) [][]float64 {
	t.Helper()
	src := &stream.MemoryDense{All: &stream.Dense{Rows: len(ids), Cols: m.D, Data: data, Group: ids}, BatchRows: 3}
	var got [][]float64
	err := Posteriors(context.Background(), m, src, 1, func(first int64, rows int, shares []float64) error {
		if first != int64(len(got)) || (first > 0 && ids[first] == ids[first-1]) || (int(first)+rows < len(ids) && ids[int(first)+rows] == ids[first]) {
			t.Fatalf("call for rows %d..%d is not one whole sequence of %v", first, int(first)+rows, ids)
		}
		for r := range rows {
			got = append(got, append([]float64(nil), shares[r*m.K:(r+1)*m.K]...))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ids) {
		t.Fatalf("%d rows of shares for %d rows", len(got), len(ids))
	}
	return got
}

// The forward–backward posteriors equal the sums over every state path, for
// one-hot symbols and for Gaussian rows (whose σ² the first pass
// estimates: the brute force uses the same value), with sequences cut
// across batches.
func TestPosteriorsBruteForce(t *testing.T) {
	m := tinyModel()
	ids := []int64{7, 7, 7, 7, 7, 3, 3, 9, 9, 9, 9, 9}
	seqs := [][2]int{{0, 5}, {5, 7}, {7, 12}}

	symbols := []int{0, 2, 2, 1, 0, 1, 1, 2, 0, 0, 1, 2}
	oneHot := make([]float64, len(symbols)*m.D)
	for r, s := range symbols {
		oneHot[r*m.D+s] = 1
	}
	gauss := []float64{0.5, 0.3, 0.2, 0.1, 0.1, 0.9, 0.2, 0.5, 0.2, 0.7, 0.2, 0.1, 0.3, 0.3, 0.3, 0.0, 0.6, 0.4,
		0.1, 0.2, 0.8, 0.6, 0.3, 0.0, 0.2, 0.2, 0.6, 0.4, 0.4, 0.1, 0.1, 0.6, 0.4, 0.9, 0.1, 0.2}
	em, err := emissionOf(context.Background(), m, &stream.MemoryDense{All: &stream.Dense{Rows: len(ids), Cols: m.D, Data: gauss, Group: ids}})
	if err != nil || em.discrete || len(em.v) != m.K || !(em.v[0] > 0) {
		t.Fatalf("Gaussian rows: emission %+v, %v", em, err)
	}
	for _, c := range []struct {
		name string
		data []float64
		b    func(x, o []float64) float64
	}{
		{"discrete", oneHot, func(x, o []float64) float64 { return x[0]*o[0] + x[1]*o[1] + x[2]*o[2] }},
		{"gaussian", gauss, func(x, o []float64) float64 {
			var d2 float64
			for u := range x {
				d2 += (x[u] - o[u]) * (x[u] - o[u])
			}
			return math.Exp(-d2 / (2 * em.v[0]))
		}},
	} {
		got := collect(t, m, c.data, ids)
		for _, s := range seqs {
			want := bruteForce(m, s[1]-s[0], func(tt, j int) float64 {
				r := s[0] + tt
				return c.b(c.data[r*m.D:(r+1)*m.D], m.O[j])
			})
			for tt, w := range want {
				for j := range w {
					// Both sum a few dozen positive terms: rounding only.
					if g := got[s[0]+tt][j]; math.Abs(g-w[j]) > 1e-12 {
						t.Fatalf("%s: row %d state %d: %g, brute force %g", c.name, s[0]+tt, j, g, w[j])
					}
				}
			}
		}
	}
}

// Rows without sequence ids, of the wrong width, or impossible under the
// model are refused with the row.
func TestPosteriorsRefuse(t *testing.T) {
	m := tinyModel()
	run := func(d *stream.Dense) error {
		return Posteriors(context.Background(), m, &stream.MemoryDense{All: d}, 1, func(int64, int, []float64) error { return nil })
	}
	if err := run(&stream.Dense{Rows: 2, Cols: 3, Data: []float64{1, 0, 0, 0, 1, 0}}); !errors.Is(err, stream.ErrSchema) {
		t.Errorf("no sequence ids: %v", err)
	}
	if err := run(&stream.Dense{Rows: 1, Cols: 2, Data: []float64{1, 0}, Group: []int64{0}}); !errors.Is(err, stream.ErrValue) {
		t.Errorf("two columns for d=3: %v", err)
	}
	// State 2 emits no symbol 0 and is the only state reachable: the
	// second row has probability 0.
	z := &Model{Model: "hmm", K: 2, D: 2, Pi: []float64{1, 0}, T: [][]float64{{0, 0}, {1, 1}}, O: [][]float64{{1, 0}, {0, 1}}}
	err := Posteriors(context.Background(), z, &stream.MemoryDense{All: &stream.Dense{Rows: 2, Cols: 2, Data: []float64{1, 0, 1, 0}, Group: []int64{4, 4}}}, 1,
		func(int64, int, []float64) error { return nil })
	var se *stream.Error
	if !errors.As(err, &se) || se.Row != 1 {
		t.Errorf("impossible row: %v", err)
	}
}
