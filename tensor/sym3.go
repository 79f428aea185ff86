package tensor

import (
	"context"
	"fmt"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// Sym3 is an explicit symmetric k×k×k tensor stored packed: the unique entries
// T_ijl with i ≤ j ≤ l in lexicographic order, k(k+1)(k+2)/6 of them.
//
// Apply uses a k × k(k+1)/2 unfolding built lazily on first use and cached.
// Set, Add, AddTensor and Scale drop the cache; code that writes Data
// directly must call Invalidate afterwards. Apply and Slice may run
// concurrently with each other, but not with a mutation.
type Sym3 struct {
	K    int
	Data []float64

	mu   sync.Mutex
	unf  *mat.Dense // k × k(k+1)/2; column (j,l), j ≤ l, holds T_ijl, doubled when j < l
	pool sync.Pool  // *[]float64 Khatri–Rao workspaces for Apply
}

// NewSym3 returns a zero symmetric tensor of dimension k.
func NewSym3(k int) *Sym3 {
	if k < 0 {
		panic("tensor: NewSym3: negative dimension")
	}
	return &Sym3{K: k, Data: make([]float64, k*(k+1)*(k+2)/6)}
}

// Dim returns k.
func (t *Sym3) Dim() int { return t.K }

// Index returns the position in Data of T_ijl; the arguments may come in any order.
func (t *Sym3) Index(i, j, l int) int {
	if i > j {
		i, j = j, i
	}
	if j > l {
		j, l = l, j
	}
	if i > j {
		i, j = j, i
	}
	k := t.K
	if i < 0 || l >= k {
		panic(fmt.Sprintf("tensor: Sym3 index (%d,%d,%d) out of range for dim %d", i, j, l, k))
	}
	// Entries whose first index is ≥ i number C(k−i+2, 3).
	m := k - i
	off := choose3(k+2) - choose3(m+2)
	jj := j - i
	return off + jj*m - jj*(jj-1)/2 + (l - j)
}

func choose3(n int) int { return n * (n - 1) * (n - 2) / 6 }

// At returns T_ijl.
func (t *Sym3) At(i, j, l int) float64 { return t.Data[t.Index(i, j, l)] }

// Set sets T_ijl (and all its permutations) to v.
func (t *Sym3) Set(i, j, l int, v float64) {
	t.Data[t.Index(i, j, l)] = v
	t.Invalidate()
}

// Add adds v to T_ijl (and all its permutations).
func (t *Sym3) Add(i, j, l int, v float64) {
	t.Data[t.Index(i, j, l)] += v
	t.Invalidate()
}

// AddTensor sets t = t + o; it is how statistics of two shards are merged.
func (t *Sym3) AddTensor(o *Sym3) {
	if o.K != t.K {
		panic(fmt.Sprintf("tensor: Sym3.AddTensor: dim %d vs %d", t.K, o.K))
	}
	for i, v := range o.Data {
		t.Data[i] += v
	}
	t.Invalidate()
}

// Scale multiplies every entry by a.
func (t *Sym3) Scale(a float64) {
	for i := range t.Data {
		t.Data[i] *= a
	}
	t.Invalidate()
}

// Invalidate drops the cached unfolding; call it after writing Data directly.
func (t *Sym3) Invalidate() {
	t.mu.Lock()
	t.unf = nil
	t.mu.Unlock()
}

// pairIndex is the column of the half unfolding for j ≤ l.
func pairIndex(k, j, l int) int { return j*k - j*(j-1)/2 + (l - j) }

// unfolding returns the cached k × k(k+1)/2 unfolding, building it if needed.
func (t *Sym3) unfolding() *mat.Dense {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.unf != nil {
		return t.unf
	}
	k := t.K
	p := k * (k + 1) / 2
	u := mat.NewDense(max(k, 1), max(p, 1), nil)
	for i := 0; i < k; i++ {
		row := u.RawRowView(i)
		for j := 0; j < k; j++ {
			for l := j; l < k; l++ {
				v := t.At(i, j, l)
				if j < l {
					v *= 2 // T_ijl and T_ilj share one column
				}
				row[pairIndex(k, j, l)] = v
			}
		}
	}
	t.unf = u
	return u
}

// Apply sets column c of dst to T(I,θ_c,θ_c). It forms the k(k+1)/2 × L
// matrix of products θ_jc θ_lc (j ≤ l) and multiplies by the cached unfolding:
// one GEMM of k³L/2 flops per call.
func (t *Sym3) Apply(ctx context.Context, dst, theta *mat.Dense) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k := t.K
	CheckApply(k, dst, theta)
	_, L := theta.Dims()
	if k == 0 || L == 0 {
		return nil
	}
	u := t.unfolding()
	p := k * (k + 1) / 2
	bufp, _ := t.pool.Get().(*[]float64)
	if bufp == nil || cap(*bufp) < p*L {
		b := make([]float64, p*L)
		bufp = &b
	}
	buf := (*bufp)[:p*L]
	for j := 0; j < k; j++ {
		tj := theta.RawRowView(j)
		for l := j; l < k; l++ {
			tl := theta.RawRowView(l)
			row := buf[pairIndex(k, j, l)*L : (pairIndex(k, j, l)+1)*L]
			for c := range row {
				row[c] = tj[c] * tl[c]
			}
		}
	}
	z := mat.NewDense(p, L, buf)
	dst.Mul(u, z)
	t.pool.Put(bufp)
	return nil
}

// Slice sets dst to T(I,I,w), the w-weighted combination of the slices.
func (t *Sym3) Slice(ctx context.Context, dst *mat.SymDense, w []float64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k := t.K
	if len(w) != k || dst.SymmetricDim() != k {
		panic(fmt.Sprintf("tensor: Sym3.Slice: dim %d, len(w)=%d, dst %d", k, len(w), dst.SymmetricDim()))
	}
	for i := 0; i < k; i++ {
		for j := i; j < k; j++ {
			s := 0.0
			for l := 0; l < k; l++ {
				s += t.Data[t.Index(i, j, l)] * w[l]
			}
			dst.SetSym(i, j, s)
		}
	}
	return nil
}

// FrobeniusSq returns Σ_ijl T_ijl² over the full (unpacked) tensor: each
// packed entry counts once per distinct permutation of its indices.
func (t *Sym3) FrobeniusSq() float64 {
	k := t.K
	s := 0.0
	idx := 0
	for i := 0; i < k; i++ {
		for j := i; j < k; j++ {
			for l := j; l < k; l++ {
				v := t.Data[idx] * t.Data[idx]
				idx++
				switch {
				case i == j && j == l:
					s += v
				case i == j || j == l:
					s += 3 * v
				default:
					s += 6 * v
				}
			}
		}
	}
	return s
}

// FromFactors returns Σ_r w_r v_r⊗v_r⊗v_r, where v is k×R with the factors as columns.
func FromFactors(w []float64, v *mat.Dense) *Sym3 {
	k, r := v.Dims()
	if len(w) != r {
		panic(fmt.Sprintf("tensor: FromFactors: %d weights for %d factors", len(w), r))
	}
	t := NewSym3(k)
	wij := make([]float64, r)
	idx := 0
	for i := 0; i < k; i++ {
		vi := v.RawRowView(i)
		for j := i; j < k; j++ {
			vj := v.RawRowView(j)
			for c := range wij {
				wij[c] = w[c] * vi[c] * vj[c]
			}
			for l := j; l < k; l++ {
				vl := v.RawRowView(l)
				s := 0.0
				for c, x := range wij {
					s += x * vl[c]
				}
				t.Data[idx] = s
				idx++
			}
		}
	}
	return t
}
