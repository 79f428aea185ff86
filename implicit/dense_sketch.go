package implicit

import (
	"errors"
	"fmt"

	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/sketch"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// The sketched second moment of the dense models that whiten (GMM, ICA)
// when d is beyond their exact dimension: the randomized range finder of
// sketch.TopEigen as mergeable passes, each over all the rows.
//
//	pass 1:        "sum" Σx, "sumsq" Σ‖x‖² and "y" Σx(xᵀΩ), for the
//	               Gaussian test matrix Ω (d×Cols) that the header's seed
//	               draws: no carried basis;
//	pass 2..1+P:   the power passes: "y" Σx(xᵀQ) for Q = orth(A·B), where
//	               A·B is the model's operator applied to the merged pass
//	               before (B its Ω or Q); Q is carried with the totals
//	               of pass 1 (rows, sum, sumsq);
//	pass 2+P:      the same product for the last Q, for Rayleigh–Ritz.
//
// Every pass keeps O(d·Cols) numbers. Pass 1 can be appended to; the
// others depend on the merged pass before over exactly their rows.

// SketchParams are the settings of a sketched second moment, recorded in
// the settings (statsfile.Header.Params) of every pass of a sketched fit.
type SketchParams struct {
	Oversample int    `json:"oversample"`
	PowerIters int    `json:"power_iters"`
	Seed       uint64 `json:"seed"`
}

// SketchFor returns the settings of the sketch of a fit over rows of d
// columns with the given exact dimension, oversampling, power passes and
// seed, or nil when d ≤ exactDim (the exact path).
func SketchFor(d, exactDim, oversample, powerIters int, seed uint64) *SketchParams {
	if d <= exactDim {
		return nil
	}
	return &SketchParams{Oversample: oversample, PowerIters: powerIters, Seed: seed}
}

// Cols is the number of columns of the test matrix for k directions in
// dimension d: k + Oversample (none when negative), at most d.
func (p SketchParams) Cols(d, k int) int {
	return min(d, k+max(p.Oversample, 0))
}

// Mark records the sketch in the header h of a pass of a sketched fit
// (nothing when p is nil: the exact path).
func (p *SketchParams) Mark(h *statsfile.Header) {
	if p == nil {
		return
	}
	h.Seed, h.Oversample, h.Sketch, h.Exact = p.Seed, p.Oversample, "gaussian", false
}

// SecondSketch is the sketched second moment of a fit: its passes, and
// the top eigenpairs of the model's operator from the last.
type SecondSketch struct {
	// Header is the header of the model's passes (Model, D, K, Params);
	// Phase and the sketch's fields are set per pass.
	Header statsfile.Header
	Params SketchParams
	// Full says that the range finder must find as many directions as the
	// test matrix has columns (Params.Cols(D, K)), not only K.
	Full bool
	// Check accepts or refuses a batch of rows.
	Check func(*stream.Dense) error
	// Product turns y, the merged totals Σx(xᵀB) over the rows of mo, into
	// A·B for the model's symmetric operator A; first says that B is Ω
	// (the first pass).
	Product func(y, b *mat.Dense, mo *Moments, first bool)
}

// NewSecondSketch returns the sketch with settings sp of a fit whose passes
// have the header h (nil when sp is: the exact path); see SecondSketch for
// full, check and product.
func NewSecondSketch(h statsfile.Header, sp *SketchParams, full bool, check func(*stream.Dense) error, product func(y, b *mat.Dense, mo *Moments, first bool)) *SecondSketch {
	if sp == nil {
		return nil
	}
	return &SecondSketch{Header: h, Params: *sp, Full: full, Check: check, Product: product}
}

// cols is the number of columns of the test matrix.
func (s *SecondSketch) cols() int { return s.Params.Cols(s.Header.D, s.Header.K) }

// Rank is the number of directions the range finder must find.
func (s *SecondSketch) Rank() int {
	if s.Full {
		return s.cols()
	}
	return s.Header.K
}

// Passes is the number of passes of a sketch with p: pass 1, the power
// passes and the Rayleigh–Ritz pass (2 + PowerIters, none for a negative
// PowerIters).
func (p SketchParams) Passes() int { return 2 + max(p.PowerIters, 0) }

// Passes is the number of passes of the sketch (SketchParams.Passes).
func (s *SecondSketch) Passes() int { return s.Params.Passes() }

// Extra is the number of passes the sketch adds to the exact path's, whose
// pass 1 its first pass replaces: Passes − 1, and 0 for nil (the exact
// path).
func (s *SecondSketch) Extra() int {
	if s == nil {
		return 0
	}
	return s.Passes() - 1
}

// FirstPass returns pass 1 of a fit of a dense model that whitens: the
// first pass of its sketch sk when it has one (d beyond the exact
// dimension), else the exact moments of MomentPass(h, exactDim, check).
func FirstPass(sk *SecondSketch, h statsfile.Header, exactDim int, check func(*stream.Dense) error) (*Pass, error) {
	if sk != nil {
		return sk.First(), nil
	}
	return MomentPass(h, exactDim, check)
}

// header returns the header of pass phase, whose basis has cols columns.
func (s *SecondSketch) header(phase, cols int) statsfile.Header {
	h := s.Header
	h.Phase, h.Cols = phase, cols
	s.Params.Mark(&h)
	return h
}

// First returns pass 1.
func (s *SecondSketch) First() *Pass {
	d := s.Header.D
	cols := s.cols()
	omega := sketch.Gaussian(d, cols, s.Params.Seed)
	sums := append(MomentSums(d)[:2], SumShape{Name: "y", Len: d * cols})
	return &Pass{Header: s.header(1, cols), Sums: sums, Worker: sketchWorker(omega, true, s.Check)}
}

// Next returns the pass after the merged statistics st of a pass of the
// sketch before its last.
func (s *SecondSketch) Next(st *DenseStats) (*Pass, error) {
	if st.Header.Phase < 1 || st.Header.Phase >= s.Passes() {
		return nil, fmt.Errorf("pass %d is not a pass of the sketch before its last (%d)", st.Header.Phase, s.Passes())
	}
	mo, _, y, err := s.operands(st.Header.Phase, st.Header.Cols, st.Rows, st.Sum, st.Fixed)
	if err != nil {
		return nil, err
	}
	q, rest, _, err := sketch.RangeBasisCols(y, s.Rank(), st.Header.Cols)
	if err != nil {
		return nil, fmt.Errorf("the range of the sketch after pass %d: %w", st.Header.Phase, err)
	}
	if rest != nil {
		var qr mat.Dense
		qr.Augment(q, rest)
		q = &qr
	}
	d, cols := q.Dims()
	return &Pass{
		Header: s.header(st.Header.Phase+1, cols),
		Sums:   []SumShape{{Name: "y", Len: d * cols}},
		Fixed:  append(firstFixed(mo.N, mo.Sum, []float64{mo.SumSq}), Fixed{Name: "q", Values: q.RawMatrix().Data}),
		Worker: sketchWorker(q, false, s.Check),
	}, nil
}

// operands returns the totals mo of pass 1, the basis B of pass phase (of
// cols columns, over rows rows) and A·B, from the pass's totals (sum) and
// carried arrays.
func (s *SecondSketch) operands(phase, cols int, rows int64, sum func(string) []float64, fixed []Fixed) (mo *Moments, b, y *mat.Dense, err error) {
	mo, b, yv, err := s.checked(phase, cols, rows, sum, fixed)
	if err != nil {
		return nil, nil, nil, err
	}
	y = mat.NewDense(s.Header.D, len(yv)/s.Header.D, append([]float64(nil), yv...))
	s.Product(y, b, mo, phase == 1)
	return mo, b, y, nil
}

// checked returns what operands forms A·B from, after its checks: the
// totals mo of pass 1, the basis B and the totals Σx(xᵀB) (shared with
// sum's storage).
func (s *SecondSketch) checked(phase, cols int, rows int64, sum func(string) []float64, fixed []Fixed) (mo *Moments, b *mat.Dense, yv []float64, err error) {
	d := s.Header.D
	if phase == 1 {
		mo = &Moments{N: rows, Sum: sum("sum")}
		sq := sum("sumsq")
		if len(sq) != 1 || len(mo.Sum) != d {
			return nil, nil, nil, errors.New("the statistics of pass 1 do not hold its totals")
		}
		mo.SumSq = sq[0]
		b = sketch.Gaussian(d, cols, s.Params.Seed)
	} else {
		if mo, err = carriedFirst(fixed, d); err != nil {
			return nil, nil, nil, err
		}
		if rows != mo.N {
			return nil, nil, nil, fmt.Errorf("the source changed between passes (%d rows, then %d)", mo.N, rows)
		}
		if b, err = fixedMatrix(fixed, "q", d); err != nil {
			return nil, nil, nil, err
		}
	}
	if mo.N == 0 {
		return nil, nil, nil, errors.New("the source has no rows")
	}
	_, bc := b.Dims()
	yv = sum("y")
	if len(yv) != d*bc {
		return nil, nil, nil, fmt.Errorf("the statistics of pass %d do not hold the sketch Σx(xᵀB) of %d×%d", phase, d, bc)
	}
	return mo, b, yv, nil
}

// Carry returns, from the merged statistics st of the last pass of the
// sketch, the arrays the model's later passes carry (CarriedLen of them):
// pass 1's totals, the last basis Q and the totals Σx(xᵀQ).
func (s *SecondSketch) Carry(st *DenseStats) ([]Fixed, error) {
	if st.Header.Phase != s.Passes() {
		return nil, fmt.Errorf("pass %d is not the last pass of the sketch (%d)", st.Header.Phase, s.Passes())
	}
	// The checks of operands; A·Q itself is formed once, by Ritz.
	if _, _, _, err := s.checked(st.Header.Phase, st.Header.Cols, st.Rows, st.Sum, st.Fixed); err != nil {
		return nil, err
	}
	return append(append([]Fixed(nil), st.Fixed...), Fixed{Name: "y", Values: st.Sum("y")}), nil
}

// CarriedLen is the number of arrays Carry returns.
const CarriedLen = 5

// Ritz returns the n algebraically largest eigenpairs of the model's
// operator on the range of the sketch, from the arrays that Carry made
// (the first CarriedLen of fixed), with the totals of pass 1.
func (s *SecondSketch) Ritz(fixed []Fixed, n int) (vals []float64, vecs *mat.Dense, mo *Moments, err error) {
	if len(fixed) < CarriedLen {
		return nil, nil, nil, errors.New("the statistics do not carry the sketch of the second moment")
	}
	fixed = fixed[:CarriedLen]
	if mo, err = carriedFirst(fixed, s.Header.D); err != nil {
		return nil, nil, nil, err
	}
	get := (&DenseStats{Fixed: fixed}).Get
	_, q, aq, err := s.operands(s.Passes(), 0, mo.N, get, fixed)
	if err != nil {
		return nil, nil, nil, err
	}
	if _, cols := q.Dims(); n > cols {
		return nil, nil, nil, fmt.Errorf("the sketch has %d directions, %d are needed", cols, n)
	}
	vals, coef, err := sketch.Ritz(q, aq, n)
	if err != nil {
		return nil, nil, nil, err
	}
	vecs = mat.NewDense(s.Header.D, n, nil)
	vecs.Mul(q, coef)
	return vals[:n], vecs, mo, nil
}

// sketchWorker returns the Pass.Worker that adds Σx(xᵀB) of a batch to
// the last total and, on the first pass, Σx and Σ‖x‖² to the first two,
// after check has accepted it.
func sketchWorker(b *mat.Dense, first bool, check func(*stream.Dense) error) func() BatchFunc {
	br := b.RawMatrix()
	d, c := br.Rows, br.Cols
	return func() BatchFunc {
		var tmp []float64
		return func(bt *stream.Dense, out [][]float64, _ func() error) error {
			if err := check(bt); err != nil {
				return err
			}
			if first {
				addFirst(bt, out[0], out[1])
			}
			if cap(tmp) < bt.Rows*c {
				tmp = make([]float64, bt.Rows*c)
			}
			x := blas64.General{Rows: bt.Rows, Cols: bt.Cols, Stride: bt.Cols, Data: bt.Data[:bt.Rows*bt.Cols]}
			xb := blas64.General{Rows: bt.Rows, Cols: c, Stride: c, Data: tmp[:bt.Rows*c]}
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, x, br, 0, xb)
			blas64.Gemm(blas.Trans, blas.NoTrans, 1, x, xb, 0, blas64.General{Rows: d, Cols: c, Stride: c, Data: out[len(out)-1]})
			return nil
		}
	}
}

// firstFixed returns the totals of pass 1 (rows, Σx, Σ‖x‖²) as carried
// arrays, as carriedFirst reads them.
func firstFixed(rows int64, sum, sumsq []float64) []Fixed {
	return []Fixed{
		{Name: "rows", Values: []float64{float64(rows)}},
		{Name: "sum", Values: sum},
		{Name: "sumsq", Values: sumsq},
	}
}

// fixedMatrix returns the carried array name as a matrix of d rows.
func fixedMatrix(fixed []Fixed, name string, d int) (*mat.Dense, error) {
	v := (&DenseStats{Fixed: fixed}).Get(name)
	if len(v) == 0 || len(v)%d != 0 {
		return nil, fmt.Errorf("the statistics do not carry the basis %s of %d rows", name, d)
	}
	return mat.NewDense(d, len(v)/d, v), nil
}
