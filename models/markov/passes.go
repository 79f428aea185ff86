package markov

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/solver"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// The statistics of a fit, in two passes over the snapshot sets:
//
//	pass 1: Σx, Σxxᵀ over the points and Σ over sets of
//	        (S1S1ᵀ − Q)/(n(n−1)) (docs/MATH.md §3.2), and the number of sets: no
//	        basis;
//	pass 2: Σ over sets of the whitened within-set third moment (and, for
//	        the HMM, Σ over points of (Wᵀx)^⊗3), for the whitenings of the
//	        merged pass 1, which it carries.
//
// Every set adds its own partial sums, so shards cut at any set boundary
// merge exactly; a shard owns the sets that begin in it (shard.Part.Groups),
// so a cut inside a set is moved to the set's end. The passes read the rows
// in order, on one worker. The r scan runs on the fit from the merged pass 2.

// params are the settings of a fit its statistics depend on.
type params struct {
	Alpha0   float64 `json:"alpha0"`
	Sigma2   float64 `json:"sigma2,omitempty"`
	Discrete bool    `json:"discrete,omitempty"`
}

// Plan is the passes of a fit with Config (an implicit.Planner): a chain
// of one-hot rows (Chain), or an HMM from snapshots. Path names the input
// in errors.
type Plan struct {
	Config Config
	Path   string
	Chain  bool
}

func (p *Plan) model() string {
	if p.Chain {
		return chainName
	}
	return hmmName
}

// ConfigFromStats returns cfg with the settings the statistics' header h
// fixes (K, Alpha0, Sigma2, Discrete).
func ConfigFromStats(cfg Config, h statsfile.Header) (Config, error) {
	var p params
	if err := h.DecodeParams(&p, chainName, hmmName); err != nil {
		return cfg, fmt.Errorf("markov: %w", err)
	}
	cfg.K, cfg.Alpha0, cfg.Sigma2, cfg.Discrete = h.K, p.Alpha0, p.Sigma2, p.Discrete
	return cfg, nil
}

func (p *Plan) withHeader(h statsfile.Header) (*Plan, error) {
	cfg, err := ConfigFromStats(p.Config, h)
	if err != nil {
		return nil, err
	}
	cfg.defaults()
	return &Plan{Config: cfg, Path: p.Path, Chain: h.Model == chainName}, nil
}

func (p *Plan) header(d, phase int) statsfile.Header {
	c := p.Config
	k := c.K
	if p.Chain {
		k = d
	}
	pj, _ := json.Marshal(params{Alpha0: c.Alpha0, Sigma2: c.Sigma2, Discrete: c.Discrete && !p.Chain})
	return statsfile.Header{Model: p.model(), Phase: phase, D: d, K: k, Cols: k, Params: pj}
}

// First returns pass 1 for rows of d columns.
func (p *Plan) First(d int) (*implicit.Pass, error) {
	cfg := p.Config
	cfg.defaults()
	k := cfg.K
	rowCheck := p.rowCheck()
	if p.Chain {
		k = d
	}
	if err := check(d, k, &cfg); err != nil {
		return nil, err
	}
	q := &Plan{Config: cfg, Path: p.Path, Chain: p.Chain}
	tri := d * (d + 1) / 2
	path := p.Path
	return &implicit.Pass{
		Header:  q.header(d, 1),
		Sums:    []implicit.SumShape{{Name: "sum", Len: d}, {Name: "xx", Len: tri}, {Name: "c2", Len: tri}, {Name: "sets", Len: 1}},
		Ordered: true,
		Worker: func() implicit.BatchFunc {
			return newSetReader(path, d, rowCheck, newPairPiece(d)).batch
		},
	}, nil
}

// carried returns the averaged pass-1 statistics that pass-1 statistics
// st hold or later statistics carry.
func carried(st *implicit.DenseStats) (*pairStats, []implicit.Fixed, error) {
	fixed := st.Fixed
	if st.Header.Phase == 1 {
		fixed = []implicit.Fixed{{Name: "rows", Values: []float64{float64(st.Rows)}}, {Name: "sum", Values: st.Sum("sum")},
			{Name: "xx", Values: st.Sum("xx")}, {Name: "c2", Values: st.Sum("c2")}, {Name: "sets", Values: st.Sum("sets")}}
	}
	d := st.Header.D
	f := implicit.DenseStats{Fixed: fixed}
	rows, sum, xx, c2, sets := f.Get("rows"), f.Get("sum"), f.Get("xx"), f.Get("c2"), f.Get("sets")
	if len(rows) != 1 || len(sum) != d || len(xx) != d*(d+1)/2 || len(c2) != d*(d+1)/2 || len(sets) != 1 {
		return nil, nil, fmt.Errorf("markov: the statistics of pass %d do not carry the sums of pass 1", st.Header.Phase)
	}
	if sets[0] < 1 {
		return nil, nil, fmt.Errorf("markov: the source has no rows")
	}
	ps := &pairStats{rows: int64(rows[0]), sets: int64(sets[0]), v1: make([]float64, d), v2: unpack(xx, d), c2: unpack(c2, d)}
	for j, v := range sum {
		ps.v1[j] = v / rows[0]
	}
	ps.v2.ScaleSym(1/rows[0], ps.v2)
	ps.c2.ScaleSym(1/sets[0], ps.c2)
	return ps, fixed, nil
}

// unpack returns the symmetric matrix whose upper triangle is packed.
func unpack(packed []float64, d int) *mat.SymDense {
	s := mat.NewSymDense(d, nil)
	raw := s.RawSymmetric()
	n := 0
	for i := range d {
		n += copy(raw.Data[i*d+i:(i+1)*d], packed[n:])
	}
	return s
}

// rowCheck is the check of every row: one-hot for a chain and a discrete
// HMM, none otherwise.
func (p *Plan) rowCheck() func(*stream.Dense, int) error {
	switch {
	case p.Chain:
		return oneHot(p.Path, chainRows)
	case p.Config.Discrete:
		return oneHot(p.Path, discreteRows)
	}
	return nil
}

// whitenings returns the set whitening and (HMM with real observations)
// the point whitening; an HMM's have as many columns as the moments give
// states (hmmWhitening).
func (p *Plan) whitenings(ps *pairStats) (wSet, wPoint *mat.Dense, err error) {
	if p.Chain {
		wh, err := chainWhitening(ps, &p.Config)
		if err != nil {
			return nil, nil, err
		}
		return wh.w, nil, nil
	}
	wh, err := hmmWhitening(ps, &p.Config)
	if err != nil {
		return nil, nil, err
	}
	if wh.u == nil {
		return wh.ut.w, nil, nil
	}
	return wh.ut.w, wh.u.w, nil
}

// pass2 returns pass 2 for the carried pass-1 sums fixed.
func (p *Plan) pass2(d int, ps *pairStats, fixed []implicit.Fixed) (*implicit.Pass, error) {
	wSet, wPoint, err := p.whitenings(ps)
	if err != nil {
		return nil, err
	}
	_, k := wSet.Dims()
	n3 := len(solver.NewSym3(k).Data)
	sums := []implicit.SumShape{{Name: "c3", Len: n3}, {Name: "sets", Len: 1}}
	if wPoint != nil {
		sums = append(sums, implicit.SumShape{Name: "v3", Len: n3})
	}
	rowCheck := p.rowCheck()
	path := p.Path
	return &implicit.Pass{
		Header:  p.header(d, 2),
		Sums:    sums,
		Fixed:   fixed,
		Ordered: true,
		Worker: func() implicit.BatchFunc {
			return newSetReader(path, d, rowCheck, newTriplePiece(wSet, wPoint)).batch
		},
	}, nil
}

// Next returns pass 2 after the merged pass-1 statistics st, or nil after
// pass 2.
func (p *Plan) Next(ctx context.Context, st *implicit.DenseStats) (*implicit.Pass, error) {
	if st.Header.Phase >= 2 {
		return nil, nil
	}
	q, err := p.withHeader(st.Header)
	if err != nil {
		return nil, err
	}
	return q.after(st)
}

// Like returns pass 1, to add rows to pass-1 statistics st; the fit takes
// the point and pair moments from the pass 1 that pass 2 carries, so rows
// appended to pass 2 would not count there (implicit.ErrNoAppend).
func (p *Plan) Like(ctx context.Context, st *implicit.DenseStats) (*implicit.Pass, error) {
	q, err := p.withHeader(st.Header)
	if err != nil {
		return nil, err
	}
	if st.Header.Phase != 1 {
		return nil, fmt.Errorf("%s pass %d: %w", q.model(), st.Header.Phase, implicit.ErrNoAppend)
	}
	return q.First(st.Header.D)
}

// after returns pass 2 for the pass-1 totals st holds or carries.
func (p *Plan) after(st *implicit.DenseStats) (*implicit.Pass, error) {
	ps, fixed, err := carried(st)
	if err != nil {
		return nil, err
	}
	return p.pass2(st.Header.D, ps, fixed)
}

// Basis returns the set whitening of pass 2 after the pass-1 statistics
// st, or that the pass-2 statistics st used.
func (p *Plan) Basis(ctx context.Context, st *implicit.DenseStats) (*mat.Dense, error) {
	q, err := p.withHeader(st.Header)
	if err != nil {
		return nil, err
	}
	ps, _, err := carried(st)
	if err != nil {
		return nil, err
	}
	w, _, err := q.whitenings(ps)
	return w, err
}

// FitStats fits the chain or HMM from merged pass-2 statistics of Plan,
// with the r scan when cfg.R is 0; the settings the statistics fix are
// taken from them, the solver's and the scan's from cfg.
func FitStats(ctx context.Context, st *implicit.DenseStats, cfg Config) (*Model, error) {
	q, err := (&Plan{Config: cfg}).withHeader(st.Header)
	if err != nil {
		return nil, err
	}
	if st.Header.Phase != 2 {
		return nil, fmt.Errorf("markov: a fit needs the statistics of pass 2, not pass %d", st.Header.Phase)
	}
	ps, _, err := carried(st)
	if err != nil {
		return nil, err
	}
	k := st.Header.D
	var wh *hmmWhitenings
	if !q.Chain {
		if wh, err = hmmWhitening(ps, &q.Config); err != nil {
			return nil, err
		}
		k = wh.states
	}
	point := !q.Chain && !q.Config.Discrete
	c3, sets, v3 := st.Sum("c3"), st.Sum("sets"), st.Sum("v3")
	n3 := len(solver.NewSym3(k).Data)
	if len(c3) != n3 || len(sets) != 1 || (point && len(v3) != n3) {
		return nil, fmt.Errorf("markov: pass-2 statistics of the wrong shape for k=%d", k)
	}
	if int64(sets[0]) != ps.sets {
		return nil, fmt.Errorf("markov: the source changed between passes (%d sets, then %d)", ps.sets, int64(sets[0]))
	}
	ts := &tripleStats{rows: st.Rows, sets: ps.sets, c3: &solver.Sym3{K: k, Data: c3}}
	ts.c3.Scale(1 / sets[0])
	if q.Chain {
		return fitChain(ctx, ps, ts, q.Config)
	}
	if point {
		ts.v3 = &solver.Sym3{K: k, Data: v3}
		ts.v3.Scale(1 / float64(st.Rows))
	}
	return fitHMM(ctx, ps, ts, wh, q.Config)
}

// setPiece is the statistics of one set, added to as its rows arrive.
type setPiece interface {
	reset()
	// batch sees each batch before its rows are added (to whiten it).
	batch(b *stream.Dense)
	// add adds rows [lo, hi) of the batch b.
	add(b *stream.Dense, lo, hi int)
	// fold writes the set's partial sums (n ≥ 3 rows) into out (zeroed).
	fold(out [][]float64, n int)
}

// setReader reads the rows of an ordered pass and hands every complete
// set's partial sums on, one partial per set.
type setReader struct {
	path    string
	d       int
	check   func(*stream.Dense, int) error
	p       setPiece
	open    bool
	id      int64
	first   int64
	n       int
	started bool
}

func newSetReader(path string, d int, check func(*stream.Dense, int) error, p setPiece) *setReader {
	return &setReader{path: path, d: d, check: check, p: p}
}

// close folds the open set into out and commits it.
func (r *setReader) close(out [][]float64, commit func() error) error {
	if !r.open {
		return nil
	}
	r.open = false
	if r.n < 3 {
		return stream.Errorf(r.path, 0, r.first, "", stream.ErrValue, "set %d has %d rows; within-set triples need at least 3", r.id, r.n)
	}
	r.p.fold(out, r.n)
	return commit()
}

// batch adds the batch b (nil: the end of the pass), committing each set
// it completes.
func (r *setReader) batch(b *stream.Dense, out [][]float64, commit func() error) error {
	if b == nil {
		return r.close(out, commit)
	}
	if err := checkSetBatch(r.path, b, r.d, r.check); err != nil {
		return err
	}
	if b.Rows == 0 {
		return nil
	}
	r.p.batch(b)
	lo := 0
	for i := 1; i <= b.Rows; i++ {
		if i < b.Rows && b.Group[i] == b.Group[lo] {
			continue
		}
		id := b.Group[lo]
		if r.started && id < r.id {
			return outOfOrder(r.path, b.Start+int64(lo), id, r.id)
		}
		if !r.open || id != r.id {
			if err := r.close(out, commit); err != nil {
				return err
			}
			r.p.reset()
			r.open, r.started, r.id, r.first, r.n = true, true, id, b.Start+int64(lo), 0
		}
		r.p.add(b, lo, i)
		r.n += i - lo
		lo = i
	}
	return nil
}

// pairPiece is S1 = Σx and Q = Σxxᵀ (upper triangle) of one set.
type pairPiece struct {
	d  int
	s1 []float64
	q  *mat.SymDense
}

func newPairPiece(d int) *pairPiece {
	return &pairPiece{d: d, s1: make([]float64, d), q: mat.NewSymDense(d, nil)}
}

func (p *pairPiece) reset() {
	clear(p.s1)
	clear(p.q.RawSymmetric().Data)
}

func (p *pairPiece) batch(*stream.Dense) {}

func (p *pairPiece) add(b *stream.Dense, lo, hi int) {
	for i := lo; i < hi; i++ {
		for j, v := range b.Row(i) {
			p.s1[j] += v
		}
	}
	blas64.Syrk(blas.Trans, 1, view(b, lo, hi), 1, p.q.RawSymmetric())
}

// fold adds Σx, Σxxᵀ and (S1S1ᵀ − Q)/(n(n−1)) (packed upper triangles)
// and one set.
func (p *pairPiece) fold(out [][]float64, n int) {
	d := p.d
	nf := float64(n)
	f := 1 / (nf * (nf - 1))
	copy(out[0], p.s1)
	q := p.q.RawSymmetric()
	c := 0
	for i := range d {
		for j := i; j < d; j++ {
			qij := q.Data[i*q.Stride+j]
			out[1][c] = qij
			out[2][c] = f*p.s1[i]*p.s1[j] - f*qij
			c++
		}
	}
	out[3][0] = 1
}

// triplePiece holds Σz, Σzzᵀ (k×k, full), Σz⊗3 of one set with z = W'ᵀx,
// and (HMM) Σ(Wᵀx)^⊗3 of its points.
type triplePiece struct {
	wSet, wPoint *mat.Dense
	k            int
	y, zz        []float64
	cube, point  *solver.Sym3
	z, zp        []float64 // the batch, whitened
}

func newTriplePiece(wSet, wPoint *mat.Dense) *triplePiece {
	_, k := wSet.Dims()
	t := &triplePiece{wSet: wSet, wPoint: wPoint, k: k, y: make([]float64, k), zz: make([]float64, k*k), cube: solver.NewSym3(k)}
	if wPoint != nil {
		t.point = solver.NewSym3(k)
	}
	return t
}

func (t *triplePiece) reset() {
	clear(t.y)
	clear(t.zz)
	clear(t.cube.Data)
	if t.point != nil {
		clear(t.point.Data)
	}
}

func (t *triplePiece) batch(b *stream.Dense) {
	k := t.k
	if cap(t.z) < b.Rows*k {
		t.z, t.zp = make([]float64, b.Rows*k), make([]float64, b.Rows*k)
	}
	x := view(b, 0, b.Rows)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, x, t.wSet.RawMatrix(), 0, blas64.General{Rows: b.Rows, Cols: k, Stride: k, Data: t.z[:b.Rows*k]})
	if t.wPoint != nil {
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, x, t.wPoint.RawMatrix(), 0, blas64.General{Rows: b.Rows, Cols: k, Stride: k, Data: t.zp[:b.Rows*k]})
	}
}

func (t *triplePiece) add(_ *stream.Dense, lo, hi int) {
	k := t.k
	for i := lo; i < hi; i++ {
		zi := t.z[i*k : (i+1)*k]
		for a, v := range zi {
			t.y[a] += v
			row := t.zz[a*k : (a+1)*k]
			for c, u := range zi {
				row[c] += v * u
			}
		}
	}
	addCubes(t.cube, t.z[lo*k:], hi-lo, ones(hi-lo))
	if t.point != nil {
		addCubes(t.point, t.zp[lo*k:], hi-lo, ones(hi-lo))
	}
}

// fold adds S1^⊗3 − Σ_s Sym3(S1, z_s z_sᵀ) + 2Σ z_s^⊗3 over n(n−1)(n−2),
// one set, and the points' cubes.
func (t *triplePiece) fold(out [][]float64, n int) {
	nf := float64(n)
	f := 1 / (nf * (nf - 1) * (nf - 2))
	c3 := &solver.Sym3{K: t.k, Data: out[0]}
	addCubes(c3, t.y, 1, []float64{f})
	addSym(c3, t.y, t.zz, -f)
	for i, v := range t.cube.Data {
		c3.Data[i] += 2 * f * v
	}
	out[1][0] = 1
	if t.point != nil {
		copy(out[2], t.point.Data)
	}
}
