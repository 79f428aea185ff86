package implicit

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/floats"
)

// real is the element type of a batch's partial sums: float64, or float32
// for speed (gonum's float32 kernels do twice the arithmetic per
// instruction and move half the bytes). Totals are always float64: a
// partial covers one batch, so float32 rounding (relative 6e-8 per
// operation) never accumulates over a pass.
type real interface{ float32 | float64 }

var impl gonum.Implementation

// axpy sets y += alpha·x.
func axpy[F real](alpha F, x, y []F) {
	switch y := any(y).(type) {
	case []float64:
		impl.Daxpy(len(y), float64(alpha), any(x).([]float64)[:len(y)], 1, y, 1)
	case []float32:
		impl.Saxpy(len(y), float32(alpha), any(x).([]float32)[:len(y)], 1, y, 1)
	}
}

// scaleTo sets dst = alpha·x.
func scaleTo[F real](dst []F, alpha F, x []F) {
	copy(dst, x[:len(dst)])
	if alpha == 1 {
		// The scatters' first count of a term, nearly always 1: the copy
		// is already exact.
		return
	}
	switch dst := any(dst).(type) {
	case []float64:
		impl.Dscal(len(dst), float64(alpha), dst, 1)
	case []float32:
		impl.Sscal(len(dst), float32(alpha), dst, 1)
	}
}

// scal sets x = alpha·x.
func scal[F real](alpha F, x []F) {
	switch x := any(x).(type) {
	case []float64:
		impl.Dscal(len(x), float64(alpha), x, 1)
	case []float32:
		impl.Sscal(len(x), float32(alpha), x, 1)
	}
}

// gather sets row r of out (rows of width w) to s_r·Σ c·x_t over the
// entries (t, c) of the batch's usable document r (s nil means 1), term by
// term through the batch's regrouping tm: each row x_t is read once per
// batch rather than once per occurrence. With a large vocabulary x does not
// fit in cache while the batch's rows of out mostly do, so this is ≈5×
// faster per CPU-second than summing document by document
// (BenchmarkGather, vocabulary 100,000, k=100).
// Each document's sum still runs over its terms in increasing order, so
// for documents with sorted terms the result is the same to the bit.
func gather[F real](tm *termGroups, n int, x []F, w int, out []F, s []float64) {
	out = out[:n*w]
	clear(out)
	for j, t := range tm.terms {
		xt := x[int(t)*w : int(t+1)*w]
		for _, e := range tm.ent[tm.start[j]:tm.start[j+1]] {
			r := int(e.row)
			axpy(F(e.cnt), xt, out[r*w:(r+1)*w])
		}
	}
	if s != nil {
		for r := range n {
			scal(F(s[r]), out[r*w:(r+1)*w])
		}
	}
}

// gemmTN sets c += aᵀ·b for a (k×m, stride lda), b (k×n, stride ldb) and
// c (m×n, stride ldc), row-major. The product is cut into column pieces
// small enough (at most gemmCols columns by m ≤ 64 rows) that gonum runs
// each on the calling goroutine: the accumulators already keep every CPU
// busy with batches, and gonum's parallel GEMM would start a goroutine per
// 64×64 block of every one of the many small products of a batch.
func gemmTN[F real](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	step := n
	if m <= gemmBlock {
		step = gemmCols
	}
	for j0 := 0; j0 < n; j0 += step {
		nj := min(step, n-j0)
		switch c := any(c).(type) {
		case []float64:
			blas64.Gemm(blas.Trans, blas.NoTrans, 1,
				blas64.General{Rows: k, Cols: m, Stride: lda, Data: any(a).([]float64)},
				blas64.General{Rows: k, Cols: nj, Stride: ldb, Data: any(b).([]float64)[j0:]},
				1, blas64.General{Rows: m, Cols: nj, Stride: ldc, Data: c[j0:]})
		case []float32:
			blas32.Gemm(blas.Trans, blas.NoTrans, 1,
				blas32.General{Rows: k, Cols: m, Stride: lda, Data: any(a).([]float32)},
				blas32.General{Rows: k, Cols: nj, Stride: ldb, Data: any(b).([]float32)[j0:]},
				1, blas32.General{Rows: m, Cols: nj, Stride: ldc, Data: c[j0:]})
		}
	}
}

// gemmBlock is gonum's GEMM block size and gemmCols the widest product it
// computes serially for at most gemmBlock rows (fewer than 4 blocks).
const (
	gemmBlock = 64
	gemmCols  = 3 * gemmBlock
)

// addTo adds x, converted to float64, to dst.
func addTo[F real](dst []float64, x []F) {
	if x, ok := any(x).([]float64); ok {
		floats.Add(dst, x[:len(dst)])
		return
	}
	x = x[:len(dst)]
	for i, v := range x {
		dst[i] += float64(v)
	}
}

// grow returns s resized to n, reallocated when too small.
func grow[F real](s []F, n int) []F {
	if cap(s) < n {
		return make([]F, n)
	}
	return s[:n]
}

// convert returns x in precision F, reusing dst.
func convert[F real](dst []F, x []float64) []F {
	dst = grow(dst, len(x))
	for i, v := range x {
		dst[i] = F(v)
	}
	return dst
}
