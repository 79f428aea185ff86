package solver

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Dense3 is an explicit, general d1×d2×d3 tensor in row-major order:
// T_ijl = Data[(i·D2+j)·D3+l]. It implements Asym and Normer; it is the
// reference the implicit and sample forms are tested against, and fine for
// moderate sizes (d1·d2·d3 values).
type Dense3 struct {
	D1, D2, D3 int
	Data       []float64
}

// NewDense3 returns a zero d1×d2×d3 tensor.
func NewDense3(d1, d2, d3 int) *Dense3 {
	return &Dense3{D1: d1, D2: d2, D3: d3, Data: make([]float64, d1*d2*d3)}
}

// Dense3FromCP returns Σ_i w_i a_i⊗b_i⊗c_i for the columns of a, b, c.
func Dense3FromCP(w []float64, a, b, c *mat.Dense) *Dense3 {
	f := []*mat.Dense{a, b, c}
	dims := checkCP(w, f)
	t := NewDense3(dims[0], dims[1], dims[2])
	fillFromCP(t.Data, dims, w, f)
	return t
}

// Dims returns D1, D2, D3.
func (t *Dense3) Dims() (int, int, int) { return t.D1, t.D2, t.D3 }

// At returns T_ijl.
func (t *Dense3) At(i, j, l int) float64 { return t.Data[(i*t.D2+j)*t.D3+l] }

// Set sets T_ijl.
func (t *Dense3) Set(i, j, l int, v float64) { t.Data[(i*t.D2+j)*t.D3+l] = v }

// FrobeniusSq returns Σ T_ijl².
func (t *Dense3) FrobeniusSq() float64 { return sumSq(t.Data) }

// Contract implements Asym with GEMMs over the stored array (no unfolding copy).
func (t *Dense3) Contract(ctx context.Context, mode int, dst, x, y *mat.Dense) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return contractDense(t.Data, []int{t.D1, t.D2, t.D3}, mode, dst, spread(mode, 3, x, y))
}

// Dense4 is an explicit d1×d2×d3×d4 tensor, T_ijlm = Data[((i·D2+j)·D3+l)·D4+m].
// It implements Asym4 and Normer.
type Dense4 struct {
	D1, D2, D3, D4 int
	Data           []float64
}

// NewDense4 returns a zero d1×d2×d3×d4 tensor.
func NewDense4(d1, d2, d3, d4 int) *Dense4 {
	return &Dense4{D1: d1, D2: d2, D3: d3, D4: d4, Data: make([]float64, d1*d2*d3*d4)}
}

// Dense4FromCP returns Σ_i w_i a_i⊗b_i⊗c_i⊗e_i for the columns of a, b, c, e.
func Dense4FromCP(w []float64, a, b, c, e *mat.Dense) *Dense4 {
	f := []*mat.Dense{a, b, c, e}
	dims := checkCP(w, f)
	t := NewDense4(dims[0], dims[1], dims[2], dims[3])
	fillFromCP(t.Data, dims, w, f)
	return t
}

// Dims returns D1…D4.
func (t *Dense4) Dims() (int, int, int, int) { return t.D1, t.D2, t.D3, t.D4 }

// At returns T_ijlm.
func (t *Dense4) At(i, j, l, m int) float64 { return t.Data[((i*t.D2+j)*t.D3+l)*t.D4+m] }

// FrobeniusSq returns Σ T_ijlm².
func (t *Dense4) FrobeniusSq() float64 { return sumSq(t.Data) }

// Contract implements Asym4.
func (t *Dense4) Contract(ctx context.Context, mode int, dst, x, y, z *mat.Dense) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return contractDense(t.Data, []int{t.D1, t.D2, t.D3, t.D4}, mode, dst, spread(mode, 4, x, y, z))
}

func sumSq(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	return s
}

// checkCP panics unless the factor matrices have len(w) columns, and returns their row counts.
func checkCP(w []float64, f []*mat.Dense) []int {
	dims := make([]int, len(f))
	for m, x := range f {
		r, c := x.Dims()
		if c != len(w) {
			panic(fmt.Sprintf("solver: CP factor %d has %d columns for %d weights", m, c, len(w)))
		}
		dims[m] = r
	}
	return dims
}

// fillFromCP writes Σ_i w_i ⊗_m f_m,i into the row-major array data.
func fillFromCP(data []float64, dims []int, w []float64, f []*mat.Dense) {
	// The first p−1 modes' Khatri–Rao rows times the last factor: one GEMM.
	p := len(dims)
	lead := khatriRao(f[:p-1], dims[:p-1], len(w))
	for i := range w {
		for q := 0; q < lead.RawMatrix().Rows; q++ {
			lead.Set(q, i, lead.At(q, i)*w[i])
		}
	}
	out := mat.NewDense(len(data)/dims[p-1], dims[p-1], data)
	out.Mul(lead, f[p-1].T())
}

// khatriRao returns the Π dims × L matrix whose column c is ⊗_m x_m,c
// (first mode most significant), or a 1×L row of ones for no modes.
func khatriRao(xs []*mat.Dense, dims []int, L int) *mat.Dense {
	rows := 1
	for _, d := range dims {
		rows *= d
	}
	k := mat.NewDense(rows, L, nil)
	cur := 1
	first := k.RawRowView(0)
	for c := range first {
		first[c] = 1
	}
	for m, x := range xs {
		d := dims[m]
		// Expand in place from the back so rows [0, cur) are read before overwritten.
		for q := cur - 1; q >= 0; q-- {
			src := append([]float64(nil), k.RawRowView(q)...)
			for i := d - 1; i >= 0; i-- {
				dstRow := k.RawRowView(q*d + i)
				xi := x.RawRowView(i)
				for c := range dstRow {
					dstRow[c] = src[c] * xi[c]
				}
			}
		}
		cur *= d
	}
	return k
}

// contractDense sets column c of dst to T contracted with column c of xs[m]
// in every mode m ≠ mode. Viewing T as pre × d_mode × post, it is
// Σ_q (M_q · KR_post) diag(KR_pre[q,:]) with M_q the d_mode × post block q;
// the first mode is one GEMM, the last one GEMM with the array transposed.
func contractDense(data []float64, dims []int, mode int, dst *mat.Dense, xs []*mat.Dense) error {
	dm := dims[mode]
	_, L := xs[(mode+1)%len(dims)].Dims()
	if r, c := dst.Dims(); r != dm || c != L {
		panic(fmt.Sprintf("solver: dense contraction of mode %d: dst %d×%d, want %d×%d", mode, r, c, dm, L))
	}
	for m, x := range xs {
		if m == mode {
			continue
		}
		if r, c := x.Dims(); r != dims[m] || c != L {
			panic(fmt.Sprintf("solver: dense contraction: mode %d vectors are %d×%d, want %d×%d", m, r, c, dims[m], L))
		}
	}
	pre := khatriRao(xs[:mode], dims[:mode], L)
	post := khatriRao(xs[mode+1:], dims[mode+1:], L)
	np, _ := pre.Dims()
	nq, _ := post.Dims()
	if nq == 1 {
		// Last mode: dst = Dᵀ KR_pre with D the (pre × d_mode) view of the array.
		d := blas64.General{Rows: np, Cols: dm, Stride: dm, Data: data}
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, d, pre.RawMatrix(), 0, dst.RawMatrix())
		return nil
	}
	dst.Zero()
	z := mat.NewDense(dm, L, nil)
	block := dm * nq
	for q := 0; q < np; q++ {
		mq := mat.NewDense(dm, nq, data[q*block:(q+1)*block])
		z.Mul(mq, post)
		scale := pre.RawRowView(q)
		for i := 0; i < dm; i++ {
			zr, dr := z.RawRowView(i), dst.RawRowView(i)
			for c := range dr {
				dr[c] += zr[c] * scale[c]
			}
		}
	}
	return nil
}
