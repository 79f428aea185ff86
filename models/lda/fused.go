package lda

import (
	"context"
	"fmt"
	"iter"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// The power pass and the third-moment pass as one (real text: W from the
// first sketch held a negative direction of M̂2). Every statistic of the
// third-moment pass but the cubes is linear in the whitened rows, and the
// W the power pass whitens with lies in the span of its basis Q, so one
// pass gathers the third-moment statistics over Q itself: their pair sums
// are the power pass's Ê2·Q, and the rest become W's by the change of
// basis C = QᵀW once the whitening is known (implicit.TripleAcc.Rebase).
// The cubes, which are not linear and over Q would cost (l/k)³ times
// W's, are a seeded sample of the documents (the automatic cube sample):
// the pass keeps those documents in memory and their cubes are summed over
// W from there. One read of the data where there were two, and the gather
// and regrouping of one pass. Where the sample is not kept (every
// document's cubes asked for, a sample too large to keep, a sweep over k,
// another representation, a checkpointed pass resumed without it), the
// two passes run as before.

// fusedKeepShare bounds the entries the pass keeps for the cube sample: a
// sample drawn at a rate is larger than expected by chance, and entries can
// be as many as tokens.
const fusedKeepShare = 1.25

// powerPass is the power pass over b's range (rangePass), or that pass and
// the third-moment pass as one (fusedRange) where the fit can fuse them:
// then th holds the third-moment statistics for nb (nil when the caller
// is to run that pass), and the plan is revised (Config.OnPlan) with the
// memory the fused pass keeps.
func powerPass(ctx context.Context, b *basis, cfg Config, plan *Plan, src stream.DocSource, track *tracker, check bool) (nb *basis, th *third, holds bool, err error) {
	sample, extra, ok := fusedSample(cfg, plan, track, src.Info().Terms, b.rangeCols(), len(b.values))
	if !ok {
		nb, holds, err = rangePass(ctx, b, cfg, src, track, check)
		return nb, nil, holds, err
	}
	if cfg.OnPlan != nil && plan != nil {
		cfg.OnPlan(plan.reviseFused(extra))
	}
	return fusedRange(ctx, b, cfg, src, track, check, sample)
}

// fusedSample returns the cube sample a fused pass would keep for a W of k
// columns that holds negative directions over a basis of l, the memory it
// would keep beyond the passes apart (fusedBytes), and whether the passes
// can be fused at all (and that memory fits plan's budget).
func fusedSample(cfg Config, plan *Plan, track *tracker, d, l, k int) (implicit.DocSample, int64, bool) {
	if !fuses(cfg) || track.sweep != nil || cfg.Third == Sketch || cfg.Third == Rows {
		return implicit.DocSample{}, 0, false
	}
	s := cfg.cubeSample(track.tokens, d, k, 1)
	if s.All() {
		return s, 0, false
	}
	extra := fusedBytes(s, track.tokens, d, l)
	return s, extra, plan.fusedFits(extra)
}

// fusedBytes is what a fused pass keeps beyond the passes apart: the
// sample's documents (up to keepLimit entries of 8 bytes) and the pair
// sums and third-moment sums over the basis (two d×l arrays with their
// exact totals' low words, where the power pass held one), with the
// heap's slack.
func fusedBytes(s implicit.DocSample, tokens int64, d, l int) int64 {
	return int64(gcSlack * float64(keepLimit(s, tokens)*8+2*int64(d)*int64(l)*8))
}

// keepLimit is the most entries a fused pass keeps for the sample s of a
// corpus of tokens tokens.
func keepLimit(s implicit.DocSample, tokens int64) int64 {
	return int64(fusedKeepShare * s.Rate * float64(tokens))
}

// fuses reports whether cfg lets the fit fuse the two passes where its
// cubes are a sample's.
func fuses(cfg Config) bool { return !cfg.noFuse && !cfg.pairSums && !cfg.Implicit }

// fusedRange is rangePass as one pass with the third moment's (see above):
// it returns the whitening and the third-moment statistics for it, with
// the cube sample's cubes; th is nil when the sample proved not kept
// whole, or the whitening wants every document's cubes, and the caller
// then runs the third-moment pass itself.
func fusedRange(ctx context.Context, b *basis, cfg Config, src stream.DocSource, track *tracker, check bool, sample implicit.DocSample) (nb *basis, th *third, holds bool, err error) {
	q := b.rangeBasis()
	d, l := q.Dims()
	k := len(b.values)
	keep := &cubeKeeper{DocSource: track.third(src), keeps: sample.Keeps(), limit: keepLimit(sample, track.tokens)}
	// The default fit's EM passes keep their sample from this pass too
	// (emTap), and by default it is the same documents (the same size and
	// seed): the cubes then come from that copy, not a second one.
	em := track.emTap.sameSample(sample)
	if cfg.ownCubeCopy {
		em = nil
	}
	if em != nil {
		keep.keeps = nil
	}
	acc := implicit.NewTripleAccNoCubes(d, l)
	acc.Float32 = cfg.tripleFloat32()
	pass := track.begin()
	if err := stage(ctx, passLabel(pass, "third-moment"), func(ctx context.Context) error {
		return track.exactTriple(ctx, keep, acc, q, cfg.Workers, func(n int) { track.report(pass, "third-moment", n, false) })
	}); err != nil {
		return nil, nil, false, err
	}
	track.report(pass, "third-moment", 0, true)
	// The pass's exact totals serve statistics files, not Fit (see Fit):
	// free their l-wide arrays before the whitening and the cubes.
	track.exact = nil

	// The power pass's whitening, from the pair sums over Q.
	nb, holds, err = whitenRange(ctx, b, q, pairOfTriple(acc, q), cfg, track, check)
	if err != nil {
		return nil, nil, false, err
	}
	kept, whole := keep.kept, !keep.over
	if em != nil {
		kept, whole = em.batch, em.full
	}
	// (A checkpoint that held the whole pass read no document here: the
	// cubes then take their own pass, as does a sample the whitening does
	// not keep.)
	if !whole || keep.docs != acc.Docs+acc.Skipped || cfg.cubeSample(track.tokens, d, k, nb.negative) != sample {
		return nb, nil, holds, nil
	}
	var c mat.Dense
	c.Mul(q.T(), nb.w)
	racc := acc.Rebase(&c, nb.w, nb.e2w == nil)
	collect()
	cubes := implicit.NewTripleAcc(d, k)
	cubes.SkipPair()
	cubes.Float32 = acc.Float32
	cubes.Cubes, cubes.Presampled = sample, true
	if err := stage(ctx, "cube-sample", func(ctx context.Context) error {
		return cubes.Pass(ctx, memoryPass(kept), cfg.Workers, nb.w, nil)
	}); err != nil {
		return nil, nil, false, err
	}
	if err := racc.TakeCubes(cubes); err != nil {
		return nil, nil, false, fmt.Errorf("lda: %w", err)
	}
	return nb, &third{acc: racc, fused: true}, holds, nil
}

// pairOfTriple returns the pair statistics against q that a power pass
// would have summed, from third-moment statistics whitened by q: its
// Ê2·Q is Z2 − diag(G2)·Q, its M̂1 and counts the same.
func pairOfTriple(a *implicit.TripleAcc, q *mat.Dense) *implicit.PairAcc {
	d, l := q.Dims()
	p := implicit.NewPairAcc(d, l)
	p.Counts = a.Counts
	copy(p.M1, a.M1)
	copy(p.E2Omega, a.Z2)
	for i := range d {
		floats.AddScaled(p.E2Omega[i*l:(i+1)*l], -a.G2[i], q.RawRowView(i))
	}
	return p
}

// cubeKeeper is a source as the fused pass reads it, keeping a copy of the
// documents of the cube sample (by their index in the source, as a pass
// over all of them decides) up to limit entries, and counting the
// documents it read.
type cubeKeeper struct {
	stream.DocSource
	keeps func(int64) bool
	limit int64
	kept  []*stream.Docs
	docs  int64 // documents seen in the last pass
	nnz   int64
	over  bool
	in    []uint8 // which documents of a batch are the sample's
}

func (k *cubeKeeper) Docs(ctx context.Context) iter.Seq2[*stream.Docs, error] {
	return func(yield func(*stream.Docs, error) bool) {
		k.kept, k.docs, k.nnz, k.over = nil, 0, 0, false
		for b, err := range k.DocSource.Docs(ctx) {
			if err == nil && b != nil {
				k.keep(b)
			}
			if !yield(b, err) {
				return
			}
		}
	}
}

// keep copies b's documents of the sample (none without keeps: the pass
// only counts them).
func (k *cubeKeeper) keep(b *stream.Docs) {
	k.docs += int64(b.Len())
	if k.over || k.keeps == nil {
		return
	}
	k.in = k.in[:0]
	some := false
	for i := range b.Len() {
		in := uint8(0)
		if k.keeps(b.Start + int64(i)) {
			in, some = 1, true
		}
		k.in = append(k.in, in)
	}
	if !some {
		return
	}
	nb := sampleCopies(b, k.in, 1)[0]
	if k.nnz += int64(nb.NNZ()); k.nnz > k.limit {
		k.over, k.kept = true, nil
		return
	}
	k.kept = append(k.kept, nb)
}
