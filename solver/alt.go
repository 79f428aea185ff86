package solver

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// CP is an asymmetric rank-r decomposition T ≈ Σ_i W_i A_i⊗B_i⊗C_i with unit columns.
type CP struct {
	W       []float64
	A, B, C *mat.Dense
	// Iters is, for Alt, the mean number of power iterations a start needed
	// to meet Tol (capped starts count as the cap), as reported in [002]
	// Table 1; for CPALS the sweeps run; for JointDiagAsym the JD sweeps.
	Iters float64
	// Starts is the number of initialisations run; Found the number of
	// distinct components kept (may be < r for Alt).
	Starts, Found int
	// Converged is false when a phase that decides the answer hit its
	// iteration cap before its tolerance; Reason then says which.
	Converged bool
	Reason    string
	// Residual is ‖T − Σ W_i A_i⊗B_i⊗C_i‖_F / ‖T‖_F when the tensor knows its
	// norm (it implements Normer: Dense3, SymAsym of a Sym3); NaN otherwise
	// (sample tensors, whose norm needs all pairs of rows).
	Residual float64
}

// CP4 is a fourth-order decomposition T ≈ Σ_i W_i F0_i⊗F1_i⊗F2_i⊗F3_i with
// unit columns; the other fields mean what they mean in CP.
type CP4 struct {
	W         []float64
	Factors   [4]*mat.Dense
	Iters     float64
	Starts    int
	Found     int
	Converged bool
	Reason    string
	Residual  float64
}

// AltOptions tunes Alt and Alt4 beyond Options.
type AltOptions struct {
	// ClusterCos is ε/2 of [002] Procedure 2: once a centre is chosen, every
	// remaining start whose |cosine| with it exceeds ClusterCos in at least
	// one mode is removed. The seed leaves ε unset; the default 0.8 keeps
	// distinct components of random unit factors apart down to d ≈ 25
	// (P(|cos| > 0.8) < 1e-4 per pair) while removing starts that converged
	// to the same component (|cos| ≈ 1 in every mode).
	ClusterCos float64
	// Residual runs that many sweeps of the coordinate-descent bias removal
	// ([002] Alg. 4) after clustering; 0 skips it. The true components are
	// exact fixed points of its update (12), so it removes the
	// non-orthogonality bias Σ_{j≠i} w_j⟨a_i,a_j⟩⟨b_i,b_j⟩c_j of update (11).
	Residual int
	// Clip is η₀ of Alg. 4 / Proc. 5 (docs/MATH.md §4.6): the start is the
	// minimum-spectral-norm factor matrix within η₀√k/d of the clustered one
	// (eq. (18)), each column moves at most η₀√k/d per sweep (Proc. 5 step
	// 3) and each weight at most ρ_w = η₀ w_max √k/d. 0 disables all three.
	Clip float64
	// Cap is η₁ of Proc. 5 step 2: the singular values of every factor
	// update are capped at η₁·max(1, √(k/d)) (the seed's η₁√(k/d), floored
	// at 1 because k unit columns always have spectral norm ≥ 1). 0 disables.
	Cap float64
	// Deflate, when positive, is the number of extra rounds Alt may run when
	// clustering found fewer than r components: the found ones are
	// subtracted implicitly (T − Σ_j w_j a_j⊗b_j⊗c_j, no tensor formed) and a
	// fresh block of starts looks for the rest on the remainder. Not in
	// [002]'s Alg. 1: with coherent factors (d = 25, pairs with |cos| ≈ 0.4)
	// some components have no basin of attraction for the rank-1 updates at
	// all (0 of 400 random starts reach them), and more starts cannot help.
	Deflate int
	// SVDInit replaces the random starts by [002] Procedure 3 (docs/MATH.md §4.6):
	// θ ~ N(0, I), and the first two factors the top singular pair of
	// T(I,I,θ) (fourth order: T(I,I,θ,θ), or T(I,I,θ,ζ) when the last two
	// dimensions differ); the other modes follow from update (11). Meant for
	// k ≤ βd. SVD starts begin near a component (fewer iterations) but favour
	// the components with large w_i, so the smallest need more starts than
	// with random initialisation. Default false (random starts).
	SVDInit bool
}

// DefaultAltOptions are the settings the registry's "alt" uses: Procedure 2
// clustering at 0.8, up to 3 deflation rounds for missed components, Alg. 4
// with 20 sweeps, η₀ = 1 and η₁ = 2 (the seed gives no values; these only
// bite when an update jumps).
func DefaultAltOptions() AltOptions {
	return AltOptions{ClusterCos: 0.8, Residual: 20, Clip: 1, Cap: 2, Deflate: 3}
}

// Alt defaults.
const (
	defaultAltIters = 100
	defaultAltTol   = 1e-8
)

// defaultAltStarts is L = max(50, 10·r). More starts do not rescue a
// component without a basin of attraction (see AltOptions.Deflate); at
// d = 25, r = 5 the found components were the same with 50 and 400 starts.
func defaultAltStarts(r int) int { return max(50, 10*r) }

// Alt runs the alternating asymmetric rank-1 power updates of [002] Alg. 1
// (docs/MATH.md §4.6) on t. opt.Restarts starts (default max(50, 10·r)) run as one
// block, a and b uniform on the sphere (or [002] Proc. 3 when ao.SVDInit)
// and c = T(a,b,I)/‖·‖; each iteration applies the simultaneous update (11)
// to the whole block (three Contract calls, so three passes over a
// SampleTensor) until every start moves less than opt.Tol (default 1e-8, in
// summed squared change) or opt.Iters (default 100) is reached.
//
// Procedure 2 then picks centres, largest |T(a,b,c)| first, removing every
// start within ao.ClusterCos of a picked centre in some mode before it is
// polished, and polishes the picked centres together as one block (opt.Iters
// more iterations); a polished centre that lands on an already kept
// component is dropped and the next start taken. If components are still
// missing, up to ao.Deflate rounds repeat this on the tensor minus the found
// components. ao.Residual sweeps of Alg. 4 then refine all components
// together on t. Weights are made positive by flipping the sign of c. r may
// exceed every dimension (overcomplete) when the factors are incoherent.
//
// If fewer than r distinct components are found, the CP of those found is
// returned together with an error wrapping ErrNoConvergence. A centre whose
// polish hit opt.Iters sets Converged = false and Reason; the answer is
// still returned.
func Alt(ctx context.Context, t Asym, r int, opt Options, ao AltOptions) (*CP, error) {
	c, err := altRun(ctx, order3{t}, r, opt, ao, "alt")
	if c == nil {
		return nil, err
	}
	return c.cp3(), err
}

// Alt4 is Alt for fourth-order tensors: update (30) of [002] refreshes each
// of the four factors from the other three (T(I,b,c,d), T(a,I,c,d), …),
// Procedure 3 uses T(I,I,θ,θ), and clustering and Alg. 4 (its fourth-order
// form: the bias of mode m is Σ_{j≠i} w_j Π_{m'≠m}⟨f_m'i, f_m'j⟩ f_mj) carry
// over mode by mode.
func Alt4(ctx context.Context, t Asym4, r int, opt Options, ao AltOptions) (*CP4, error) {
	c, err := altRun(ctx, order4{t}, r, opt, ao, "alt4")
	if c == nil {
		return nil, err
	}
	return c.cp4(), err
}

// cpn is the order-p result of Alt and Alt4.
type cpn struct {
	w         []float64
	f         []*mat.Dense
	iters     float64
	starts    int
	converged bool
	reason    string
	residual  float64
}

func (c *cpn) cp3() *CP {
	return &CP{W: c.w, A: c.f[0], B: c.f[1], C: c.f[2], Iters: c.iters, Starts: c.starts, Found: len(c.w),
		Converged: c.converged, Reason: c.reason, Residual: c.residual}
}

func (c *cpn) cp4() *CP4 {
	return &CP4{W: c.w, Factors: [4]*mat.Dense{c.f[0], c.f[1], c.f[2], c.f[3]}, Iters: c.iters, Starts: c.starts,
		Found: len(c.w), Converged: c.converged, Reason: c.reason, Residual: c.residual}
}

// altRun is Alt for any order: starts, clustering and deflation rounds,
// then Alg. 4 on everything found.
func altRun(ctx context.Context, t multilinear, r int, opt Options, ao AltOptions, name string) (*cpn, error) {
	if r < 1 {
		return nil, fmt.Errorf("%s: %w: rank %d < 1", name, ErrRank, r)
	}
	L := opt.Restarts
	if L <= 0 {
		L = defaultAltStarts(r)
	}
	n, tol := opt.limits(defaultAltIters, defaultAltTol)
	if ao.ClusterCos <= 0 {
		ao.ClusterCos = 0.8
	}
	rng := newRNG(opt.Seed)
	out := &cpn{converged: true}
	var kept []*mat.Dense
	var keptW []float64
	for round := 0; round <= max(ao.Deflate, 0) && len(keptW) < r; round++ {
		var tr multilinear = t
		if len(keptW) > 0 {
			tr = deflatedML{t, keptW, kept}
		}
		f, err := initStarts(ctx, tr, L, ao.SVDInit, rng)
		if err != nil {
			return nil, err
		}
		iters, _, err := altPhase(ctx, tr, f, n, tol)
		if err != nil {
			return nil, err
		}
		if round == 0 {
			for _, v := range iters {
				out.iters += float64(v)
			}
			out.iters /= float64(L)
		}
		out.starts += L
		w, err := cpValuesN(ctx, tr, f)
		if err != nil {
			return nil, err
		}
		more, ok, err := cluster(ctx, tr, f, w, r-len(keptW), n, tol, ao.ClusterCos)
		if err != nil {
			return nil, err
		}
		if !ok && out.converged {
			out.converged = false
			out.reason = fmt.Sprintf("%s: polishing a cluster centre hit the %d-iteration cap before tol %.3g", name, n, tol)
		}
		if more != nil && kept != nil {
			// A start on the remainder can land on the residue of a found component.
			more = dropNear(more, kept, ao.ClusterCos)
		}
		if more == nil {
			break
		}
		mw, err := cpValuesN(ctx, tr, more)
		if err != nil {
			return nil, err
		}
		kept = appendCols(kept, more)
		keptW = append(keptW, mw...)
	}
	m := len(keptW)
	if m == 0 {
		return nil, fmt.Errorf("%s: %w: no start produced a component", name, ErrDegenerate)
	}
	out.f = kept
	var err error
	if out.w, err = cpValuesN(ctx, t, kept); err != nil {
		return nil, err
	}
	flipPositive(out.w, out.f)
	if ao.Residual > 0 {
		if err := removeResidual(ctx, t, out.w, out.f, ao.Residual, ao.Clip, ao.Cap); err != nil {
			return nil, err
		}
		flipPositive(out.w, out.f)
	}
	out.residual = cpResidual(ctx, t, out.w, out.f)
	if m < r {
		return out, fmt.Errorf("%s: %w: found %d distinct components of %d with %d starts; use more restarts or deflation rounds", name, ErrNoConvergence, m, r, out.starts)
	}
	return out, nil
}

// flipPositive makes every weight non-negative by flipping the last factor.
func flipPositive(w []float64, f []*mat.Dense) {
	last := f[len(f)-1]
	d, _ := last.Dims()
	for j, v := range w {
		if v < 0 {
			w[j] = -v
			for i := 0; i < d; i++ {
				last.Set(i, j, -last.At(i, j))
			}
		}
	}
}

// initStarts returns L unit starts per mode: random for all modes but the
// last, or with svd the first two from Procedure 3; the remaining modes
// follow from update (11) (fourth order: mode 2 contracted with the
// Procedure 3 direction in mode 3, then mode 3 from the other three).
func initStarts(ctx context.Context, t multilinear, L int, svd bool, rng *rand.Rand) ([]*mat.Dense, error) {
	dims := t.dims()
	p := len(dims)
	f := make([]*mat.Dense, p)
	for m, d := range dims {
		f[m] = mat.NewDense(d, L, nil)
	}
	from := p - 1
	var thetas []*mat.Dense
	if svd {
		var err error
		if thetas, err = svdInit(ctx, t, f, rng); err != nil {
			return nil, err
		}
		from = 2
	} else {
		for m := 0; m < p-1; m++ {
			randomUnit(f[m], rng)
		}
	}
	for m := from; m < p; m++ {
		xs := make([]*mat.Dense, p)
		copy(xs, f)
		for q := m + 1; q < p; q++ {
			xs[q] = thetas[q]
		}
		if err := t.contract(ctx, m, f[m], xs); err != nil {
			return nil, err
		}
		normalizeCols(f[m])
	}
	return f, nil
}

// svdBlockCols bounds the columns of one contraction in svdInit.
const svdBlockCols = 4096

// svdInit fills the first two factors of every start by [002] Procedure 3:
// draw θ ~ N(0, I) for mode 2 (and mode 3, equal to θ when the dimensions
// agree, i.e. T(I,I,θ,θ)), form M = T(I,I,θ…) column by column (column j is
// a mode-0 contraction with e_j in mode 1) and take its top singular pair.
// When M is zero the start falls back to random unit vectors. It returns the
// θ of every start per mode ≥ 2 (columns), for the completion of the others.
func svdInit(ctx context.Context, t multilinear, f []*mat.Dense, rng *rand.Rand) ([]*mat.Dense, error) {
	dims := t.dims()
	p := len(dims)
	d1, d2 := dims[0], dims[1]
	_, L := f[0].Dims()
	thetas := make([]*mat.Dense, p)
	for m := 2; m < p; m++ {
		if m == 3 && dims[3] == dims[2] {
			thetas[3] = thetas[2]
			continue
		}
		thetas[m] = mat.NewDense(dims[m], L, nil)
		for i := 0; i < dims[m]; i++ {
			row := thetas[m].RawRowView(i)
			for j := range row {
				row[j] = rng.NormFloat64()
			}
		}
	}
	per := max(1, svdBlockCols/d2) // starts per contraction
	var svd mat.SVD
	for s0 := 0; s0 < L; s0 += per {
		s1 := min(L, s0+per)
		m := s1 - s0
		xs := make([]*mat.Dense, p)
		xs[1] = mat.NewDense(d2, m*d2, nil)
		for q := 2; q < p; q++ {
			xs[q] = mat.NewDense(dims[q], m*d2, nil)
		}
		for s := 0; s < m; s++ {
			for j := 0; j < d2; j++ {
				xs[1].Set(j, s*d2+j, 1)
				for q := 2; q < p; q++ {
					for i := 0; i < dims[q]; i++ {
						xs[q].Set(i, s*d2+j, thetas[q].At(i, s0+s))
					}
				}
			}
		}
		out := mat.NewDense(d1, m*d2, nil)
		if err := t.contract(ctx, 0, out, xs); err != nil {
			return nil, err
		}
		for s := 0; s < m; s++ {
			mt := out.Slice(0, d1, s*d2, (s+1)*d2)
			if !svd.Factorize(mt, mat.SVDThin) || svd.Values(nil)[0] == 0 {
				for i := 0; i < d1; i++ {
					f[0].Set(i, s0+s, rng.NormFloat64())
				}
				for i := 0; i < d2; i++ {
					f[1].Set(i, s0+s, rng.NormFloat64())
				}
				continue
			}
			var u, v mat.Dense
			svd.UTo(&u)
			svd.VTo(&v)
			for i := 0; i < d1; i++ {
				f[0].Set(i, s0+s, u.At(i, 0))
			}
			for i := 0; i < d2; i++ {
				f[1].Set(i, s0+s, v.At(i, 0))
			}
		}
	}
	normalizeCols(f[0])
	normalizeCols(f[1])
	return thetas, nil
}

// altPhase applies update (11)/(30) — every mode refreshed from the others'
// previous values — to every column until each moved less than tol (squared
// change summed over the modes) or n iterations; it returns, per column, the
// iteration at which it first met tol (n if never) and whether all did.
func altPhase(ctx context.Context, t multilinear, f []*mat.Dense, n int, tol float64) ([]int, bool, error) {
	p := len(f)
	_, L := f[0].Dims()
	nf := make([]*mat.Dense, p)
	for m, x := range f {
		d, _ := x.Dims()
		nf[m] = mat.NewDense(d, L, nil)
	}
	done := make([]int, L)
	left := L
	for it := 1; it <= n && left > 0; it++ {
		for m := range f {
			if err := t.contract(ctx, m, nf[m], f); err != nil {
				return nil, false, err
			}
		}
		for m := range f {
			normalizeCols(nf[m])
		}
		for j := 0; j < L; j++ {
			if done[j] != 0 {
				continue
			}
			ch := 0.0
			for m := range f {
				ch += colDistSq(nf[m], f[m], j)
			}
			if ch <= tol {
				done[j] = it
				left--
			}
		}
		for m := range f {
			f[m].Copy(nf[m])
		}
	}
	for j := range done {
		if done[j] == 0 {
			done[j] = n
		}
	}
	return done, left == 0, nil
}

func colDistSq(x, y *mat.Dense, j int) float64 {
	r, _ := x.Dims()
	s := 0.0
	for i := 0; i < r; i++ {
		d := x.At(i, j) - y.At(i, j)
		s += d * d
	}
	return s
}

// cluster is [002] Procedure 2 with the candidates polished as one block:
// repeatedly take, among the remaining starts, the one with the largest
// |T(a,b,c)| and remove every start within thr of it (max |cos| over the
// modes), until enough candidates for the missing centres are picked;
// polish them together; keep each polished candidate that is not within thr
// of a kept centre and remove the starts within thr of it. It ends with r
// centres or an exhausted pool, and reports whether every polish met tol.
func cluster(ctx context.Context, t multilinear, f []*mat.Dense, w []float64, r, n int, tol, thr float64) ([]*mat.Dense, bool, error) {
	p := len(f)
	_, L := f[0].Dims()
	order := make([]int, L)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return math.Abs(w[order[i]]) > math.Abs(w[order[j]]) })
	removed := make([]bool, L)
	var kept []*mat.Dense // p matrices, one column per centre
	nk := 0
	ok := true
	for nk < r {
		var cand []int
		for _, s := range order {
			if len(cand) == r-nk {
				break
			}
			if removed[s] {
				continue
			}
			cand = append(cand, s)
			removeNear(f, columnsOf(f, []int{s}), 0, removed, thr)
		}
		if len(cand) == 0 {
			break
		}
		block := columnsOf(f, cand)
		_, okb, err := altPhase(ctx, t, block, n, tol)
		if err != nil {
			return nil, false, err
		}
		ok = ok && okb
		for c := range cand {
			if maxCosTo(kept, nk, block, c) > thr {
				continue // converged onto a component already kept
			}
			if kept == nil {
				kept = make([]*mat.Dense, p)
				for m, x := range block {
					d, _ := x.Dims()
					kept[m] = mat.NewDense(d, r, nil)
				}
			}
			setColumn(kept, nk, block, c)
			nk++
			removeNear(f, block, c, removed, thr)
		}
	}
	if nk == 0 {
		return nil, ok, nil
	}
	for m := range kept {
		d, _ := kept[m].Dims()
		kept[m] = mat.DenseCopyOf(kept[m].Slice(0, d, 0, nk))
	}
	return kept, ok, nil
}

// columnsOf copies the given columns of every mode.
func columnsOf(f []*mat.Dense, cols []int) []*mat.Dense {
	out := make([]*mat.Dense, len(f))
	for m, x := range f {
		d, _ := x.Dims()
		out[m] = mat.NewDense(d, len(cols), nil)
		for j, c := range cols {
			for i := 0; i < d; i++ {
				out[m].Set(i, j, x.At(i, c))
			}
		}
	}
	return out
}

// appendCols returns the column-wise concatenation [a b] per mode (b alone when a is nil).
func appendCols(a, b []*mat.Dense) []*mat.Dense {
	if a == nil {
		return b
	}
	out := make([]*mat.Dense, len(a))
	for m := range a {
		d, ca := a[m].Dims()
		_, cb := b[m].Dims()
		out[m] = mat.NewDense(d, ca+cb, nil)
		out[m].Slice(0, d, 0, ca).(*mat.Dense).Copy(a[m])
		out[m].Slice(0, d, ca, ca+cb).(*mat.Dense).Copy(b[m])
	}
	return out
}

// deflatedML is t − Σ_j w_j ⊗_m f_mj, contracted implicitly: the
// correction of a contraction is f_mode · (w ∘ Π_{m≠mode} f_mᵀ x_m).
type deflatedML struct {
	t multilinear
	w []float64
	f []*mat.Dense
}

func (d deflatedML) dims() []int             { return d.t.dims() }
func (d deflatedML) frobSq() (float64, bool) { return math.NaN(), false }

func (d deflatedML) contract(ctx context.Context, mode int, dst *mat.Dense, xs []*mat.Dense) error {
	if err := d.t.contract(ctx, mode, dst, xs); err != nil {
		return err
	}
	var coef *mat.Dense
	for m, x := range xs {
		if m == mode {
			continue
		}
		var c mat.Dense
		c.Mul(d.f[m].T(), x)
		if coef == nil {
			coef = &c
		} else {
			coef.MulElem(coef, &c)
		}
	}
	r, L := coef.Dims()
	for j := 0; j < r; j++ {
		row := coef.RawRowView(j)
		for c := 0; c < L; c++ {
			row[c] *= d.w[j]
		}
	}
	var corr mat.Dense
	corr.Mul(d.f[mode], coef)
	dst.Sub(dst, &corr)
	return nil
}

// dropNear returns the columns of x not within thr of any column of y
// (max |cos| over the modes), or nil when none is left.
func dropNear(x, y []*mat.Dense, thr float64) []*mat.Dense {
	_, n := x[0].Dims()
	_, ny := y[0].Dims()
	var keep []int
	for c := 0; c < n; c++ {
		if maxCosTo(y, ny, x, c) <= thr {
			keep = append(keep, c)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	return columnsOf(x, keep)
}

// setColumn copies column c of src into column j of dst.
func setColumn(dst []*mat.Dense, j int, src []*mat.Dense, c int) {
	for m, x := range src {
		d, _ := x.Dims()
		for i := 0; i < d; i++ {
			dst[m].Set(i, j, x.At(i, c))
		}
	}
}

// maxCos returns max over modes of |⟨x_m,i, y_m,j⟩| (unit columns).
func maxCos(x []*mat.Dense, i int, y []*mat.Dense, j int) float64 {
	best := 0.0
	for m := range x {
		best = math.Max(best, math.Abs(mat.Dot(x[m].ColView(i), y[m].ColView(j))))
	}
	return best
}

// maxCosTo is the largest maxCos between column c of y and the first n columns of x.
func maxCosTo(x []*mat.Dense, n int, y []*mat.Dense, c int) float64 {
	best := 0.0
	for i := 0; i < n; i++ {
		best = math.Max(best, maxCos(x, i, y, c))
	}
	return best
}

// removeNear marks every start of f within thr of column c of centre (max
// |cos| over the modes, Procedure 2 step 5) as removed.
func removeNear(f, centre []*mat.Dense, c int, removed []bool, thr float64) {
	_, L := f[0].Dims()
	cos := mat.NewVecDense(L, nil)
	for m, x := range f {
		cos.MulVec(x.T(), centre[m].ColView(c))
		for s := 0; s < L; s++ {
			if math.Abs(cos.AtVec(s)) > thr {
				removed[s] = true
			}
		}
	}
}
