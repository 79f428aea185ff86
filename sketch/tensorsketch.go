package sketch

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"
	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/mat"
)

// TensorSketch is a tensor sketch of a symmetric k×k×k tensor T (Wang, Tung,
// Smola and Anandkumar 2015, "Fast and guaranteed tensor decomposition via
// sketching"): Count independent count sketches (h, s) of R^k into R^b, and
// for each the sketch
//
//	S(T)[t] = Σ_abc s(a)s(b)s(c) T_abc [h(a)+h(b)+h(c) ≡ t mod b],
//
// kept as its Fourier spectrum, in which a rank-1 term x⊗x⊗x is the cube of
// the spectrum of CS(x) (a⊗b⊗c with the same (h, s) is the product of three).
// Memory is Count·(b/2+1) complex numbers whatever the number of terms added,
// and adding a term costs O(k + b log b) per sketch.
//
// The contraction T(I,u,u) is estimated for all k coordinates at once by FFT
// correlations. Because the three modes share one hash, the sketch inner
// product ⟨S(T), S(X)⟩ counts every entry of T with an index multiset m as
// often as m has orderings (6, 3 or 1); the query is therefore weighted by
// the inverse multiplicity, X' = [X + D₂(X) + 2·D₃(X)]/6 with D₂, D₃ the
// pair- and triple-diagonal parts, which makes the estimate unbiased over the
// random signs except for O(1/b) terms from bucket collisions 2h(a) ≡ 2h(a').
// The estimate is itself a symmetric tensor T̂ (the query is a polarised cubic
// form), so T̂(I,u,u) = ∇T̂(u,u,u)/3 and the power method runs on a genuine
// symmetric tensor; its error shrinks like ‖T‖_F/√(b·Count).
//
// TensorSketch implements solver.Tensor. Apply is safe to call while nothing
// is being added; adding is not safe for concurrent use (give each worker its
// own sketch from Empty and Merge them).
type TensorSketch struct {
	k, b, count int
	seed        uint64
	// Median combines the Count estimates by their coordinate-wise median
	// (robust to one bad sketch) instead of their mean. The mean keeps T̂ a
	// tensor; the median does not.
	Median bool

	cs   []*CountSketch
	spec [][]complex128 // per sketch, b/2+1 coefficients of S(T)
	w    *tsWork        // scratch for adding terms
}

// NewTensorSketch returns an empty sketch of a k×k×k symmetric tensor with
// count independent sketches of length b drawn from seed.
func NewTensorSketch(k, b, count int, seed uint64) *TensorSketch {
	if k < 1 || b < 2 || count < 1 {
		panic(fmt.Sprintf("sketch: tensor sketch needs k ≥ 1, b ≥ 2, count ≥ 1; got k=%d, b=%d, count=%d", k, b, count))
	}
	t := &TensorSketch{k: k, b: b, count: count, seed: seed}
	for r := range count {
		t.cs = append(t.cs, NewCountSketch(k, b, splitmix(seed+uint64(r))))
		t.spec = append(t.spec, make([]complex128, b/2+1))
	}
	return t
}

// splitmix is the SplitMix64 finaliser, used to derive one seed per sketch.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Dim is k.
func (t *TensorSketch) Dim() int { return t.k }

// Len is b, the length of each sketch.
func (t *TensorSketch) Len() int { return t.b }

// Count is the number of independent sketches.
func (t *TensorSketch) Count() int { return t.count }

// Empty returns a zero sketch with the same hashes, for a worker whose sketch
// will be merged into t.
func (t *TensorSketch) Empty() *TensorSketch {
	e := &TensorSketch{k: t.k, b: t.b, count: t.count, seed: t.seed, Median: t.Median, cs: t.cs}
	for range t.count {
		e.spec = append(e.spec, make([]complex128, t.b/2+1))
	}
	return e
}

// ErrSketchMismatch reports a merge of sketches with different shapes or hashes.
var ErrSketchMismatch = errors.New("sketch: tensor sketches differ in dimension, length, count or seed")

// Merge adds o into t: the sketch of a sum is the sum of the sketches.
func (t *TensorSketch) Merge(o *TensorSketch) error {
	if t.k != o.k || t.b != o.b || t.count != o.count || t.seed != o.seed {
		return fmt.Errorf("%w: (k=%d, b=%d, count=%d, seed=%d) and (k=%d, b=%d, count=%d, seed=%d)",
			ErrSketchMismatch, t.k, t.b, t.count, t.seed, o.k, o.b, o.count, o.seed)
	}
	for r := range t.spec {
		for f, v := range o.spec[r] {
			t.spec[r][f] += v
		}
	}
	return nil
}

// Scale multiplies the sketched tensor by f.
func (t *TensorSketch) Scale(f float64) {
	c := complex(f, 0)
	for _, sp := range t.spec {
		for i := range sp {
			sp[i] *= c
		}
	}
}

// tsWork is the scratch of one goroutine: an FFT plan and buffers.
type tsWork struct {
	fft        *fourier.FFT
	x, y, z    []float64 // length b
	uu         []float64 // length k
	fx, fy, fz []complex128
}

func (t *TensorSketch) work() *tsWork {
	n := t.b/2 + 1
	return &tsWork{
		fft: fourier.NewFFT(t.b),
		x:   make([]float64, t.b), y: make([]float64, t.b), z: make([]float64, t.b),
		uu: make([]float64, t.k),
		fx: make([]complex128, n), fy: make([]complex128, n), fz: make([]complex128, n),
	}
}

func (t *TensorSketch) scratch() *tsWork {
	if t.w == nil {
		t.w = t.work()
	}
	return t.w
}

func (t *TensorSketch) checkVec(name string, x []float64) {
	if len(x) != t.k {
		panic(fmt.Sprintf("sketch: TensorSketch of dim %d given %s of length %d", t.k, name, len(x)))
	}
}

// AddCube adds w·x⊗x⊗x.
func (t *TensorSketch) AddCube(w float64, x []float64) {
	t.checkVec("x", x)
	ws := t.scratch()
	c := complex(w, 0)
	for r, cs := range t.cs {
		cs.Apply(ws.x, x)
		fx := ws.fft.Coefficients(ws.fx, ws.x)
		sp := t.spec[r]
		for f, v := range fx {
			sp[f] += c * v * v * v
		}
	}
}

// AddCubes adds Σ_r w[r]·x_r⊗x_r⊗x_r for the rows x_r of the n×k row-major x.
func (t *TensorSketch) AddCubes(w, x []float64) {
	if len(x) != len(w)*t.k {
		panic(fmt.Sprintf("sketch: AddCubes with %d weights and %d values for dim %d", len(w), len(x), t.k))
	}
	for r, wr := range w {
		t.AddCube(wr, x[r*t.k:(r+1)*t.k])
	}
}

// AddSym3Outer adds w·Sym₃(v, x xᵀ) + c·x⊗x⊗x, where Sym₃(v, x xᵀ) =
// v⊗x⊗x + x⊗v⊗x + x⊗x⊗v: two FFTs per sketch for both terms.
func (t *TensorSketch) AddSym3Outer(w float64, v, x []float64, c float64) {
	t.checkVec("v", v)
	t.checkVec("x", x)
	ws := t.scratch()
	cw, cc := complex(3*w, 0), complex(c, 0)
	for r, cs := range t.cs {
		cs.Apply(ws.x, x)
		cs.Apply(ws.y, v)
		fx := ws.fft.Coefficients(ws.fx, ws.x)
		fv := ws.fft.Coefficients(ws.fy, ws.y)
		sp := t.spec[r]
		for f := range sp {
			sp[f] += (cw*fv[f] + cc*fx[f]) * fx[f] * fx[f]
		}
	}
}

// AddSym3 adds a·Sym₃(v, M) + c·v⊗v⊗v for a symmetric k×k matrix M (nil
// means no Sym₃ term): the low-rank form of moment corrections. Sym₃(v, M)
// sketches to 3·CS(v) ⊛ CS₂(M), where CS₂(M)[t] = Σ_ab s(a)s(b)M_ab
// [h(a)+h(b) ≡ t] costs O(k²), so the whole term costs O(k² + b log b).
func (t *TensorSketch) AddSym3(a float64, v []float64, m mat.Symmetric, c float64) {
	t.checkVec("v", v)
	if m != nil && m.SymmetricDim() != t.k {
		panic(fmt.Sprintf("sketch: TensorSketch of dim %d given a %d×%d matrix", t.k, m.SymmetricDim(), m.SymmetricDim()))
	}
	ws := t.scratch()
	for r, cs := range t.cs {
		cs.Apply(ws.x, v)
		fv := ws.fft.Coefficients(ws.fx, ws.x)
		sp := t.spec[r]
		if m != nil {
			clear(ws.y)
			for i := range t.k {
				for j := range t.k {
					ws.y[(cs.Bucket[i]+cs.Bucket[j])%t.b] += cs.Sign[i] * cs.Sign[j] * m.At(i, j)
				}
			}
			fm := ws.fft.Coefficients(ws.fy, ws.y)
			for f := range sp {
				sp[f] += complex(3*a, 0) * fv[f] * fm[f]
			}
		}
		for f := range sp {
			sp[f] += complex(c, 0) * fv[f] * fv[f] * fv[f]
		}
	}
}

// Apply sets column j of dst to the estimate T̂(I,θ_j,θ_j), combining the
// Count sketches by mean (or median). For one sketch and u = θ_j:
//
//	T̂(I,u,u)_i = [s(i)·c₁[h(i)] + 2uᵢ·c₂[2h(i)] + 2s(i)uᵢ²·S(T)[3h(i)]]/6,
//
// with c₁ the circular correlation of S(T) with CS(u)⊛CS(u) + CS₂(u⊙u) and
// c₂ its correlation with CS(u), both one inverse FFT. Per column and sketch
// it costs two forward and two inverse FFTs of length b; columns are spread
// over GOMAXPROCS goroutines.
func (t *TensorSketch) Apply(ctx context.Context, dst, theta *mat.Dense) error {
	k, l := theta.Dims()
	if dr, dc := dst.Dims(); k != t.k || dr != t.k || dc != l {
		panic(fmt.Sprintf("sketch: TensorSketch.Apply: dim %d, theta %d×%d, dst %d×%d", t.k, k, l, dr, dc))
	}
	// S(T) in the time domain, for the triple-diagonal term.
	st := make([][]float64, t.count)
	w0 := t.work()
	for r := range t.count {
		st[r] = w0.fft.Sequence(nil, t.spec[r])
		for i := range st[r] {
			st[r][i] /= float64(t.b)
		}
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), l))
	g, ctx := errgroup.WithContext(ctx)
	for wk := range workers {
		g.Go(func() error {
			ws := w0
			if wk > 0 {
				ws = t.work()
			}
			u := make([]float64, t.k)
			est := make([]float64, t.count*t.k)
			col := make([]float64, t.count)
			for j := wk; j < l; j += workers {
				if err := ctx.Err(); err != nil {
					return err
				}
				mat.Col(u, j, theta)
				for r := range t.count {
					t.estimate(ws, r, st[r], u, est[r*t.k:(r+1)*t.k])
				}
				for i := range t.k {
					for r := range t.count {
						col[r] = est[r*t.k+i]
					}
					dst.Set(i, j, t.combine(col))
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// estimate writes T̂(I,u,u) from sketch r into out.
func (t *TensorSketch) estimate(ws *tsWork, r int, st, u, out []float64) {
	cs, sp, b := t.cs[r], t.spec[r], t.b
	cs.Apply(ws.x, u)
	clear(ws.y)
	for i, v := range u {
		ws.uu[i] = v * v
	}
	cs.addPowered(ws.y, 2, ws.uu)
	fu := ws.fft.Coefficients(ws.fx, ws.x)
	f2 := ws.fft.Coefficients(ws.fy, ws.y)
	// c₁ ← S(T) ⋆ (CS(u)⊛CS(u) + CS₂(u⊙u)); c₂ ← S(T) ⋆ CS(u).
	for f := range sp {
		f2[f] = sp[f] * cmplx.Conj(fu[f]*fu[f]+f2[f])
		fu[f] = sp[f] * cmplx.Conj(fu[f])
	}
	c1 := ws.fft.Sequence(ws.x, f2)
	c2 := ws.fft.Sequence(ws.y, fu)
	inv := 1 / (6 * float64(b))
	for i, v := range u {
		h, s := cs.Bucket[i], cs.Sign[i]
		out[i] = (s*c1[h]+2*v*c2[(2*h)%b])*inv + s*v*v*st[(3*h)%b]/3
	}
}

// combine reduces the per-sketch estimates of one coordinate (reordering x).
func (t *TensorSketch) combine(x []float64) float64 {
	if len(x) == 1 {
		return x[0]
	}
	if t.Median {
		slices.Sort(x)
		n := len(x)
		if n%2 == 1 {
			return x[n/2]
		}
		return (x[n/2-1] + x[n/2]) / 2
	}
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// inner returns the mean over sketches of ⟨S(T), S(a⊗b⊗c)⟩ (unweighted: for
// distinct-index entries it is 6·T(a,b,c) in expectation). Tests use it to
// check Apply against a direct evaluation on the sketch.
func (t *TensorSketch) inner(a, b, c []float64) float64 {
	ws := t.work()
	s := 0.0
	for r, cs := range t.cs {
		cs.Apply(ws.x, a)
		cs.Apply(ws.y, b)
		cs.Apply(ws.z, c)
		fa := slices.Clone(ws.fft.Coefficients(ws.fx, ws.x))
		fb := slices.Clone(ws.fft.Coefficients(ws.fy, ws.y))
		fc := ws.fft.Coefficients(ws.fz, ws.z)
		for f := range fc {
			fc[f] *= fa[f] * fb[f]
		}
		q := ws.fft.Sequence(ws.x, fc)
		st := ws.fft.Sequence(ws.y, t.spec[r])
		v := 0.0
		for i := range q {
			v += q[i] * st[i]
		}
		s += v / float64(t.b) / float64(t.b)
	}
	return s / float64(t.count)
}

// Spectrum returns the b/2+1 Fourier coefficients of sketch r (shared, not a
// copy), for serialisation.
func (t *TensorSketch) Spectrum(r int) []complex128 { return t.spec[r] }

// Bytes is the memory held by the sketch's spectra and hash tables.
func (t *TensorSketch) Bytes() int64 {
	return int64(t.count) * (int64(t.b/2+1)*16 + int64(t.k)*16)
}

// tsMagic starts the binary form of a TensorSketch (version 1).
const tsMagic = "SFTS\x01"

// MarshalBinary encodes the sketch: shape, seed and the spectra (the hashes
// are redrawn from the seed), little-endian.
func (t *TensorSketch) MarshalBinary() ([]byte, error) {
	out := make([]byte, 0, len(tsMagic)+33+t.count*(t.b/2+1)*16)
	out = append(out, tsMagic...)
	for _, v := range []uint64{uint64(t.k), uint64(t.b), uint64(t.count), t.seed} {
		out = binary.LittleEndian.AppendUint64(out, v)
	}
	med := byte(0)
	if t.Median {
		med = 1
	}
	out = append(out, med)
	for _, sp := range t.spec {
		for _, c := range sp {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(real(c)))
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(imag(c)))
		}
	}
	return out, nil
}

// ErrSketchFormat reports bytes that are not a sketch written by MarshalBinary.
var ErrSketchFormat = errors.New("sketch: not a tensor sketch (bad magic, version or length)")

// UnmarshalBinary decodes a sketch written by MarshalBinary into t.
func (t *TensorSketch) UnmarshalBinary(data []byte) error {
	const head = len(tsMagic) + 33
	if len(data) < head || string(data[:len(tsMagic)]) != tsMagic {
		return ErrSketchFormat
	}
	var h [4]uint64
	for i := range h {
		h[i] = binary.LittleEndian.Uint64(data[len(tsMagic)+8*i:])
	}
	k, b, count := h[0], h[1], h[2]
	if k < 1 || b < 2 || count < 1 || k > 1<<24 || b > 1<<32 || count > 1<<16 ||
		uint64(len(data)-head) != count*(b/2+1)*16 {
		return fmt.Errorf("%w: k=%d, b=%d, count=%d with %d bytes of spectra", ErrSketchFormat, k, b, count, len(data)-head)
	}
	*t = *NewTensorSketch(int(k), int(b), int(count), h[3])
	t.Median = data[head-1] == 1
	p := head
	for _, sp := range t.spec {
		for f := range sp {
			re := math.Float64frombits(binary.LittleEndian.Uint64(data[p:]))
			im := math.Float64frombits(binary.LittleEndian.Uint64(data[p+8:]))
			sp[f] = complex(re, im)
			p += 16
		}
	}
	return nil
}
