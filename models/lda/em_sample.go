package lda

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"iter"
	"math"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// The EM passes of a large corpus in one process (Fit, RefineEM): the first
// ones run on a seeded sample of its documents, the last ones on all of
// them. From the spectral start the first passes make the large moves
// towards the likelihood's maximum, and a sample of EM.Sample tokens
// measures those moves nearly as well as the whole corpus would, at a
// fraction of the E-steps; the passes over every document that follow
// (EM.FullPasses) give the final topics every document's evidence.
//
// The sample's first passes run on its first half alone (half(0): every
// other batch of it in memory), until their bound rises by less than
// EM.Tol in a pass, the rule that would end passes over every document,
// or they have taken half (rounded up) of the passes the cap leaves the
// sample (EM.halfPasses): the first M-steps from the start move far, and
// half the sample measures those moves as well at half the E-steps, as
// the sample measures them for the corpus. The passes on the whole sample follow; the first of them
// is compared with none of the half's (whose bound is of other documents)
// and takes a plain M-step. A half's M-step that lowered the held-out
// bound is undone and ends the half's passes, not the sample's (but where
// it is the first M-step and EM's start holds, below). On the Debian
// descriptions repeated 28 times (k = 50, bench/scale/RESULTS.md) five
// passes on the half and four on the whole sample gave a held-out
// perplexity 0.7% lower than nine on the whole sample, for 0.72× their
// E-steps.
//
// A sample can also mislead: where the spectral start is already close to
// the maximum (data drawn from the model itself), the sample's own noise
// is larger than the move, and an M-step on it lowers the likelihood of the
// other documents. So a second, disjoint sample of a quarter of the size
// is held out: before each M-step on the sample its bound under the
// current parameters is measured, and a sample pass that lowered it is
// undone (the parameters before it are restored) and ends the sample's
// passes. They also end when they converge on the sample (the stopping
// rule at EM.SampleTol, tighter than EM.Tol since a pass on the sample
// costs its share of a pass over every document) or leave EM.FullPasses
// passes of the cap. Where they end, the sample's learning curve
// (fullGain) predicts what the passes over every document would add;
// below EM.FullGain they are skipped. When the first M-step on
// the sample is undone, the sample has taught nothing: if that step
// lowered the held-out bound by less than the stopping rule's tolerance,
// EM's start is already as good as the rule asks (data drawn from LDA
// itself, where the spectral fit is consistent) and the refinement ends
// there; if by more, the sample is too small for the model, and the passes
// over every document follow the ordinary stopping rule instead of
// stopping after EM.FullPasses.
//
// Both samples are fixed sets of documents (implicit.DocSample): document
// i, its index in the source, belongs by a hash of i and the spectral
// fit's seed, whatever the batches or workers. The sample's statistics
// stand for the corpus's: the M-step weighs the prior pseudo-count η by the
// sample's share of the tokens, as if the expected counts were scaled up
// to the corpus. Both samples are kept in memory (8 bytes an entry) by
// Fit's third-moment pass, which reads every document anyway (emTap), or
// else by the first EM pass, so the passes on them decode nothing.
//
// The statistics route (EMPassStats, EMStep; the pipelines) runs every pass
// over every document: undoing a pass needs the parameters before it, one
// process's state.

// heldOutShare is the size of the held-out sample against the sample's.
const heldOutShare = 0.25

// sampleTokens is the size of the EM sample for d words and k topics: −1
// when sampling is off.
func (e EM) sampleTokens(d, k int) int64 {
	if e.Sample != 0 {
		return max(e.Sample, -1)
	}
	return max(DefaultSample, SampleTokensPerParam*int64(d)*int64(k))
}

// emSampleRate is the rate of the EM sample of a corpus of tokens tokens,
// d words and k topics under em: 1 when the corpus has at most the
// sample's tokens or sampling is off.
func emSampleRate(em EM, d, k int, tokens int64) float64 {
	n := em.sampleTokens(d, k)
	if n < 0 || tokens <= n {
		return 1
	}
	return float64(n) / float64(tokens)
}

// emDocs serves the batch EM passes of Fit and RefineEM their documents:
// the sample's and the held-out sample's, or the whole corpus's (rate 1),
// from memory once a pass has read them all, else from the source (which
// the passes over every document of a sampled corpus always read). The
// memory copies keep the source's batches (filtered), so a pass from
// memory cuts the same pieces as one from the source, and a checkpoint's
// batch count means the same in both.
type emDocs struct {
	src        stream.DocSource
	rate       float64
	train, val implicit.DocSample
	limit      int64 // entries the memory copies may hold
	batch      []*stream.Docs
	held       []*stream.Docs
	full       bool // batch and held hold every document of the samples
	tried      bool // a pass has tried to keep them (full says whether it could)
}

func newEMDocs(src stream.DocSource, em EM, st *emState) *emDocs {
	return newEMDocsAt(src, em, st.params.D, st.params.K, st.rate, st.seed)
}

// newEMDocsAt serves the EM passes of d words and k topics on the samples
// of rate and seed.
func newEMDocsAt(src stream.DocSource, em EM, d, k int, rate float64, seed uint64) *emDocs {
	e := &emDocs{src: src, rate: rate, limit: max(em.sampleTokens(d, k), 0)}
	if e.sampled() {
		e.train = implicit.DocSample{Rate: rate, Seed: seed}
		e.val = implicit.DocSample{Rate: min(1, rate*heldOutShare), Seed: ^seed}
		e.limit = sampleLimit(e.limit)
	}
	return e
}

// emTap keeps the EM samples of Fit from its third-moment pass, which
// reads every document anyway, so the first EM pass needs no read of its
// own (emDocs.tap).
type emTap struct {
	em   EM
	d, k int
	seed uint64
	docs *emDocs // the copies of the last third-moment pass
}

// source returns src with the samples of a corpus of tokens tokens kept as
// its documents pass; src itself when t is nil.
func (t *emTap) source(src stream.DocSource, tokens int64) stream.DocSource {
	if t == nil {
		return src
	}
	t.docs = newEMDocsAt(src, t.em, t.d, t.k, emSampleRate(t.em, t.d, t.k, tokens), t.seed)
	return tappedSource{DocSource: src, docs: t.docs.tap(src.Docs)}
}

// sameSample returns the EM samples the last tapped pass kept when their
// training sample is s (the same documents), else nil.
func (t *emTap) sameSample(s implicit.DocSample) *emDocs {
	if t == nil || t.docs == nil || !t.docs.sampled() || t.docs.train != s {
		return nil
	}
	return t.docs
}

// tappedSource is a source whose passes are served by docs.
type tappedSource struct {
	stream.DocSource
	docs func(context.Context) iter.Seq2[*stream.Docs, error]
}

func (s tappedSource) Docs(ctx context.Context) iter.Seq2[*stream.Docs, error] { return s.docs(ctx) }

// sampleLimit is the most entries the EM passes keep in memory for a
// sample of n tokens: its and the held-out sample's (a quarter more),
// with a tenth more again since the samples' tokens are drawn (entries
// can be as many as tokens, where every word of a document is distinct),
// so a sample a little larger than expected is kept rather than none.
func sampleLimit(n int64) int64 {
	l := n + int64(float64(n)*heldOutShare)
	return l + l/10
}

// sampled reports whether the corpus is sampled (rate < 1).
func (e *emDocs) sampled() bool { return e.rate < 1 }

// pass returns the documents of the next pass: the sample's when sample
// (the whole corpus's when the rate is 1), else the source's.
func (e *emDocs) pass(sample bool) func(context.Context) iter.Seq2[*stream.Docs, error] {
	if !sample && e.sampled() {
		return e.src.Docs
	}
	if e.full {
		return memoryPass(e.batch)
	}
	// This pass reads the source and keeps what it reads, unless that
	// outgrows the limit; a pass cut short leaves the copies incomplete.
	return e.keeping(e.src.Docs, true)
}

// tap returns docs, a pass over every document of the source that another
// accumulator runs (the third-moment pass), with the samples' documents
// kept as the first EM pass would keep them: that pass then reads them from
// memory, one decode of the corpus fewer. The batches docs yields are the
// source's, untouched.
func (e *emDocs) tap(docs func(context.Context) iter.Seq2[*stream.Docs, error]) func(context.Context) iter.Seq2[*stream.Docs, error] {
	return e.keeping(docs, false)
}

// keeping returns the pass over docs that keeps the samples' documents as
// it goes (complete only if the pass runs to its end). It yields the
// sample's copy of each batch, releasing the batch, when copies is set,
// else the batch itself.
func (e *emDocs) keeping(docs func(context.Context) iter.Seq2[*stream.Docs, error], copies bool) func(context.Context) iter.Seq2[*stream.Docs, error] {
	return func(ctx context.Context) iter.Seq2[*stream.Docs, error] {
		return func(yield func(*stream.Docs, error) bool) {
			k := e.keeper()
			for b, err := range docs(ctx) {
				if err != nil {
					yield(nil, err)
					return
				}
				out := k.keep(b)
				if copies {
					b.Release()
				} else {
					out = b
				}
				if !yield(out, nil) {
					return
				}
			}
			k.done()
		}
	}
}

// sampleKeeper copies the documents of one pass into e's samples.
type sampleKeeper struct {
	e          *emDocs
	nnz        int64
	over       bool
	train, val func(int64) bool
	in         []uint8 // the sample of each document of a batch: 0 none, 1 train, 2 held out
}

// keeper empties e's copies and starts a pass that fills them.
func (e *emDocs) keeper() *sampleKeeper {
	e.batch, e.held, e.full, e.tried = e.batch[:0], e.held[:0], false, true
	return &sampleKeeper{e: e, train: e.train.Keeps(), val: e.val.Keeps()}
}

// keep copies the documents of b that the samples hold (all of them at
// rate 1) and returns the sample's batch, a copy b's release leaves intact.
func (k *sampleKeeper) keep(b *stream.Docs) *stream.Docs {
	e := k.e
	var nb *stream.Docs
	if !e.sampled() {
		nb = &stream.Docs{Start: b.Start, Offsets: append([]int(nil), b.Offsets...),
			Terms: append([]int32(nil), b.Terms...), Counts: append([]int32(nil), b.Counts...)}
	} else {
		// The copies are sized exactly (they live as long as the EM
		// passes): which sample each document is in first, then the copy.
		k.in = k.in[:0]
		for i := range b.Len() {
			in := uint8(0)
			switch doc := b.Start + int64(i); {
			case k.train(doc):
				in = 1
			case k.val(doc):
				in = 2
			}
			k.in = append(k.in, in)
		}
		copies := sampleCopies(b, k.in, 2)
		nb = copies[0]
		k.add(&e.held, copies[1])
	}
	k.add(&e.batch, nb)
	return nb
}

// sampleCopies returns copies of b's documents by sample: for each sample
// 1, …, n, a batch (Start b.Start) of the documents in puts in it (in[i]
// is document i's sample, 0 for none), sized exactly, since such copies
// live for the passes that read them.
func sampleCopies(b *stream.Docs, in []uint8, n int) []*stream.Docs {
	docs, entries := make([]int, n+1), make([]int, n+1)
	for i, s := range in {
		docs[s]++
		entries[s] += b.Offsets[i+1] - b.Offsets[i]
	}
	out := make([]*stream.Docs, n)
	for s := range out {
		out[s] = &stream.Docs{Start: b.Start, Offsets: append(make([]int, 0, docs[s+1]+1), 0),
			Terms: make([]int32, 0, entries[s+1]), Counts: make([]int32, 0, entries[s+1])}
	}
	for i, s := range in {
		if s > 0 {
			out[s-1].AppendDoc(b.Doc(i))
		}
	}
	return out
}

// add appends b to *dst unless the copies outgrow the limit, which drops
// them all.
func (k *sampleKeeper) add(dst *[]*stream.Docs, b *stream.Docs) {
	if k.over {
		return
	}
	if k.nnz += int64(b.NNZ()); k.nnz > k.e.limit {
		k.over, k.e.batch, k.e.held = true, nil, nil
		return
	}
	*dst = append(*dst, b)
}

// done ends a pass that read every batch of the source: the copies are
// complete unless they outgrew the limit.
func (k *sampleKeeper) done() {
	k.e.full = !k.over
	if !k.e.full {
		k.e.batch, k.e.held = nil, nil
	}
}

// adopt takes the copies another emDocs kept (tap), when they are of the
// same samples and complete.
func (e *emDocs) adopt(o *emDocs) {
	if o == nil || o.rate != e.rate || o.train != e.train || o.val != e.val || o.limit != e.limit {
		return
	}
	e.tried = o.tried
	if o.full {
		e.batch, e.held, e.full = o.batch, o.held, true
	}
}

// gather reads the source once, keeping the samples' documents, and
// computes nothing: a resumed fit's first pass on the sample, which the
// uninterrupted fit ran from memory (as halves, with warm starts), runs
// from memory too.
func (e *emDocs) gather(ctx context.Context) error {
	for _, err := range e.keeping(e.src.Docs, true)(ctx) {
		if err != nil {
			return err
		}
	}
	return nil
}

// half returns the pass over half the sample kept in memory: every other
// batch of it, from the first (i = 0) or the second (i = 1); nil when the
// sample is not in memory. The two halves' statistics add up to the whole
// sample's exactly (EMAcc's totals do not depend on the split).
func (e *emDocs) half(i int) func(context.Context) iter.Seq2[*stream.Docs, error] {
	if !e.full || !e.sampled() {
		return nil
	}
	var bs []*stream.Docs
	for j := i; j < len(e.batch); j += 2 {
		bs = append(bs, e.batch[j])
	}
	return memoryPass(bs)
}

// halvable reports whether the sample is in memory in at least two
// batches, so that half(0) and half(1) both hold documents.
func (e *emDocs) halvable() bool {
	return e.full && e.sampled() && len(e.batch) >= 2
}

// heldOut returns the documents of the held-out sample, which the pass on
// the sample before it has kept in memory (nil: it could not keep them,
// and the sample's passes run without the check).
func (e *emDocs) heldOut() func(context.Context) iter.Seq2[*stream.Docs, error] {
	if !e.full || !e.sampled() {
		return nil
	}
	return memoryPass(e.held)
}

// memoryPass is a pass over batches kept in memory, each yielded as a view
// (its release does nothing).
func memoryPass(batches []*stream.Docs) func(context.Context) iter.Seq2[*stream.Docs, error] {
	return func(ctx context.Context) iter.Seq2[*stream.Docs, error] {
		return func(yield func(*stream.Docs, error) bool) {
			for _, b := range batches {
				if err := ctx.Err(); err != nil {
					yield(nil, err)
					return
				}
				if !yield(&stream.Docs{Start: b.Start, Offsets: b.Offsets, Terms: b.Terms, Counts: b.Counts}, nil) {
					return
				}
			}
		}
	}
}

// emRecordSample records the sample's passes in m's EM record.
func emRecordSample(rec *models.EMStats, st *emState) {
	if st.rate >= 1 {
		return
	}
	rec.Sample = &models.EMSample{Rate: st.rate, Passes: st.samplePasses, HalfPasses: st.halfPasses, HeldOut: st.heldOut, Undone: st.undone}
	if !math.IsNaN(st.gain) {
		g := st.gain
		rec.Sample.FullGain = &g
	}
}

// fullGain predicts, when the sample's passes end, how much passes over
// every document would raise the held-out sample's bound per token,
// relatively: the learning curve of the sample. acc holds the last pass's statistics over
// the sample and half those over half of it (emDocs.half), both under the
// parameters the pass started from (st.prev). Each gives a plain M-step
// from them, scored on the held-out sample; if the bound's shortfall
// falls as 1/n in the documents n an M-step sees (the error of an
// estimate from n documents), the gain g from half the sample to all of
// it, h·n tokens to n, predicts the gain from all of it to the corpus's
// n/rate: g·(1 − rate)/(1/h − 1). NaN when it cannot be measured (no
// held-out sample, no parameters to start from, or halves not in two).
func (st *emState) fullGain(ctx context.Context, acc, half *EMAcc, em EM, held func(context.Context) iter.Seq2[*stream.Docs, error], heldWarm *warmStarts, workers int) (float64, error) {
	if held == nil || st.prevBeta == nil || half == nil || half.Tokens == 0 || half.Tokens >= acc.Tokens || st.tokens <= 0 {
		return math.NaN(), nil
	}
	p := st.params
	p.Alpha, p.Beta = make([]float64, len(st.prevAlpha)), make([]float64, len(st.prevBeta))
	score := func(a *EMAcc) (float64, error) {
		copy(p.Alpha, st.prevAlpha)
		copy(p.Beta, st.prevBeta)
		mStep(&p, a, em.Eta*float64(a.Tokens)/float64(st.tokens), em.FitAlpha, 1)
		var bound float64
		var tokens int64
		err := stage(ctx, "em-learning-curve", func(ctx context.Context) (err error) {
			bound, tokens, err = emBound(ctx, held, workers, &p, heldWarm, false)
			return err
		})
		if err != nil || tokens == 0 {
			return math.NaN(), err
		}
		return bound / float64(tokens), nil
	}
	all, err := score(acc)
	if err != nil {
		return 0, err
	}
	part, err := score(half)
	if err != nil {
		return 0, err
	}
	h := float64(half.Tokens) / float64(acc.Tokens)
	return (all - part) * (1 - st.rate) / (1/h - 1) / math.Abs(all), nil
}

// warmTopics is the most topics a document's warm start keeps (EStep.Top):
// a document of the sample uses few, and its start need not be exact.
const warmTopics = 8

// warmStarts holds, for each document of the sample in memory, the topics
// and expected counts its last E-step ended with, the start of its next
// (EStep.Start): the sample's passes run the same documents again under
// parameters an M-step has moved a little, so each document starts near
// its fixed point. A document is found by its batch's Start plus its place
// in the batch, unique among the sample's (a kept batch holds at most the
// documents of the source's batch it comes from), and the same in every
// process that keeps the sample of the same source.
//
// The starts are held twice: a pass reads the last pass's (cur) and writes
// its own (next), swapped at its end, each document's once, from the
// worker that runs it; so what a worker computes depends on the last
// pass's starts and the parameters alone, not on the workers nor on which
// batches were committed before. A checkpoint within a pass saves next's
// entries of the documents committed (done), and a resumed pass recomputes
// the others from cur to the same values.
type warmStarts struct {
	at   map[int64]int32 // document → its number
	off  []int32         // a document's first entry, by its number
	cur  warmBuf
	next warmBuf
	done []bool // the documents whose batches the pass has committed
	keys uint32 // CRC-32C of the documents and their room, in order
}

// warmBuf is one set of starts: a document's entries (0: none yet) and
// their topics and expected counts.
type warmBuf struct {
	n   []uint8
	top []int32
	cnt []float32
}

// newWarmStarts makes room for the documents of batches: at most
// warmTopics entries each, and no more than its distinct words.
func newWarmStarts(batches []*stream.Docs) *warmStarts {
	w := &warmStarts{at: make(map[int64]int32)}
	total := 0
	sum := crc32.New(ckptCRC)
	var buf [12]byte
	for _, b := range batches {
		for i := range b.Len() {
			doc, room := b.Start+int64(i), min(warmTopics, b.Offsets[i+1]-b.Offsets[i])
			w.at[doc] = int32(len(w.off))
			w.off = append(w.off, int32(total))
			total += room
			binary.LittleEndian.PutUint64(buf[:8], uint64(doc))
			binary.LittleEndian.PutUint32(buf[8:], uint32(room))
			sum.Write(buf[:])
		}
	}
	w.off = append(w.off, int32(total))
	w.keys = sum.Sum32()
	docs := len(w.off) - 1
	for _, b := range []*warmBuf{&w.cur, &w.next} {
		b.n, b.top, b.cnt = make([]uint8, docs), make([]int32, total), make([]float32, total)
	}
	w.done = make([]bool, docs)
	return w
}

// expect runs es on document doc (terms, counts), from its warm start when
// it has one, and records where it ended.
func (w *warmStarts) expect(es *EStep, doc int64, terms, counts []int32) float64 {
	return w.expectFrom(es, doc, terms, counts, true)
}

// expectFrom is expect, recording where the E-step ended only with record.
func (w *warmStarts) expectFrom(es *EStep, doc int64, terms, counts []int32, record bool) float64 {
	i, ok := w.at[doc]
	if !ok {
		return es.Expect(terms, counts)
	}
	lo, hi := w.off[i], w.off[i+1]
	es.Start(w.cur.top[lo:lo+int32(w.cur.n[i])], w.cur.cnt[lo:lo+int32(w.cur.n[i])])
	bd := es.Expect(terms, counts)
	if record {
		w.next.n[i] = uint8(es.Top(w.next.top[lo:hi], w.next.cnt[lo:hi]))
	}
	return bd
}

// commit marks the n documents from doc (a committed batch's) done.
func (w *warmStarts) commit(doc int64, n int) {
	if n == 0 {
		return
	}
	if i, ok := w.at[doc]; ok {
		for j := range n {
			w.done[int(i)+j] = true
		}
	}
}

// begin starts a pass: no document is done.
func (w *warmStarts) begin() { clear(w.done) }

// swap ends a pass: its starts are the next pass's.
func (w *warmStarts) swap() {
	w.cur, w.next = w.next, w.cur
	clear(w.done)
}

// warmSkip marks a document whose starts a checkpoint does not hold.
const warmSkip = 0xff

// write writes the starts of b to out: per document a byte, its entries
// (warmSkip: a document sel leaves out), then those entries' topics and
// expected counts, little endian.
func (w *warmStarts) write(out io.Writer, b *warmBuf, sel func(int) bool) error {
	bw := bufio.NewWriter(out)
	var buf [8]byte
	for i := range b.n {
		// A document sel leaves out may be being written (a batch not yet
		// committed): its entries are not read.
		if sel != nil && !sel(i) {
			bw.WriteByte(warmSkip)
			continue
		}
		n := b.n[i]
		bw.WriteByte(n)
		lo := int(w.off[i])
		for e := lo; e < lo+int(n); e++ {
			binary.LittleEndian.PutUint32(buf[:4], uint32(b.top[e]))
			binary.LittleEndian.PutUint32(buf[4:], math.Float32bits(b.cnt[e]))
			bw.Write(buf[:])
		}
	}
	return bw.Flush()
}

// read fills b from what write wrote, and returns the documents it held
// (the others keep their starts).
func (w *warmStarts) read(in io.Reader, b *warmBuf) ([]bool, error) {
	held := make([]bool, len(b.n))
	var buf [8]byte
	for i := range b.n {
		if _, err := io.ReadFull(in, buf[:1]); err != nil {
			return nil, err
		}
		n := buf[0]
		if n == warmSkip {
			continue
		}
		lo := int(w.off[i])
		if int(n) > int(w.off[i+1])-lo {
			return nil, fmt.Errorf("document %d has %d starts, room for %d", i, n, int(w.off[i+1])-lo)
		}
		for e := lo; e < lo+int(n); e++ {
			if _, err := io.ReadFull(in, buf[:]); err != nil {
				return nil, err
			}
			b.top[e] = int32(binary.LittleEndian.Uint32(buf[:4]))
			b.cnt[e] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4:]))
		}
		b.n[i], held[i] = n, true
	}
	return held, nil
}
