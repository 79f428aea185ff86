package implicit

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/sketch"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// The passes of the sketched second moment, each over two shards merged,
// give the statistics of the whole data bit for bit, and their Ritz values
// are those of sketch.TopEigen on the explicit matrix E[xxᵀ] with the same
// test matrix and power passes (the same subspace, so agreement to
// rounding).
func TestSecondSketchPasses(t *testing.T) {
	const n, d, k, power = 600, 30, 3, 2
	r := rand.New(rand.NewPCG(3, 4))
	a := mat.NewDense(d, 4, nil)
	for i := range d {
		for j := range 4 {
			a.Set(i, j, r.NormFloat64()*float64(4-j))
		}
	}
	data := make([]float64, n*d)
	for i := range n {
		for j := range d {
			v := 0.3 * r.NormFloat64()
			for l := range 4 {
				v += a.At(j, l) * r.NormFloat64() / 4
			}
			data[i*d+j] = v
		}
	}
	rows := func(lo, hi int) *stream.MemoryDense {
		return &stream.MemoryDense{All: &stream.Dense{Rows: hi - lo, Cols: d, Data: data[lo*d : hi*d]}, BatchRows: 100}
	}
	sp := &SketchParams{Oversample: 4, PowerIters: power, Seed: 9}
	h := statsfile.Header{Model: "gmm", D: d, K: k}
	sk := NewSecondSketch(h, sp, true, func(*stream.Dense) error { return nil }, func(y, _ *mat.Dense, mo *Moments, _ bool) {
		y.Scale(1/float64(mo.N), y)
	})
	if NewSecondSketch(h, SketchFor(d, d, 4, power, 9), true, nil, nil) != nil {
		t.Fatal("a sketch for d ≤ the exact dimension")
	}
	ctx := context.Background()
	body := func(st *DenseStats) []byte {
		c := *st
		c.Header.Shards = 0
		var buf bytes.Buffer
		if err := c.Encode(ctx, &buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	pass := sk.First()
	var st *DenseStats
	for phase := 1; ; phase++ {
		whole, err := pass.Run(ctx, rows(0, n).Rows, 2)
		if err != nil {
			t.Fatal(err)
		}
		lo, err := pass.Run(ctx, rows(0, 300).Rows, 1)
		if err != nil {
			t.Fatal(err)
		}
		hi, err := pass.Run(ctx, rows(300, n).Rows, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := hi.Merge(lo); err != nil {
			t.Fatal(err)
		}
		if whole.Header.Phase != phase || !bytes.Equal(body(whole), body(hi)) {
			t.Fatalf("pass %d: the merged shards differ from the whole data", phase)
		}
		st = hi
		if phase == sk.Passes() {
			break
		}
		if pass, err = sk.Next(st); err != nil {
			t.Fatal(err)
		}
		if q := (&DenseStats{Fixed: pass.Fixed}).Get("q"); len(q) != d*pass.Header.Cols {
			t.Fatalf("pass %d carries no basis of %d×%d", phase+1, d, pass.Header.Cols)
		}
	}
	if sk.Passes() != 2+power {
		t.Fatalf("%d passes", sk.Passes())
	}
	fixed, err := sk.Carry(st)
	if err != nil {
		t.Fatal(err)
	}
	cols := sp.Cols(d, k)
	vals, vecs, mo, err := sk.Ritz(fixed, cols)
	if err != nil || mo.N != n {
		t.Fatal(err, mo)
	}
	if _, c := vecs.Dims(); c != cols {
		t.Fatalf("%d Ritz vectors, want %d", c, cols)
	}
	x := mat.NewDense(n, d, data)
	s := mat.NewSymDense(d, nil)
	s.SymOuterK(1/float64(n), x.T())
	want, err := sketch.TopEigen(ctx, sketch.Dense{A: s}, cols, sketch.Options{Oversample: -1, PowerIters: power, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range want.Values {
		if math.Abs(v-vals[i]) > 1e-9*want.Values[0] {
			t.Errorf("Ritz value %d: %g, TopEigen's %g", i, vals[i], v)
		}
	}
	// A pass of other rows than pass 1's is refused.
	st.Rows--
	if _, err := sk.Carry(st); err == nil {
		t.Error("the last pass over fewer rows than pass 1 was accepted")
	}
}
