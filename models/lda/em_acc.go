package lda

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"iter"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/stream"
)

// EMAcc holds the statistics of one variational EM pass for fixed topic
// parameters (TopicParams): the expected word-topic counts, the weights'
// sufficient statistics and the bound, summed over the documents. They are
// additive: the statistics of two shards merge (Merge) into those of their
// union, also across processes (Encode, DecodeEMAcc), and the M-step needs
// nothing else. Memory is d·k (and as much again for the exact totals' low
// words).
//
// The totals are exact (see implicit.FixedScale): each document's contribution is
// truncated to a fixed-point grid and added as an integer, so the totals do
// not depend on how the documents are split into batches, shards or
// workers, nor on the order of merges; N, Suff and Bound hold the totals
// rounded to float64. The grids are constants, the same for every shard:
// N at 2^emExpN (a document adds at most its count of a word to an
// entry; totals up to 2^(emExpN+113) = 2^81 tokens), Suff and Bound at
// 2^emExpSum (totals up to 2^73 in magnitude). A batch's expected counts
// are summed as 64-bit integers of 2^emExpN, which holds any batch of fewer
// than 2^31 tokens (a larger one is refused).
type EMAcc struct {
	D, K int
	// Docs and Tokens count the documents with at least one token and
	// their tokens; Empty counts the documents without any.
	Docs, Tokens, Empty int64
	// N[w*K+j] = Σ_d c_dw φ_dwj, the expected number of times word w was
	// drawn from topic j.
	N []float64
	// Suff[j] = Σ_d E log θ_dj (LDA) or Σ_d r_dj (single topic).
	Suff []float64
	// Bound is Σ_d of the documents' bounds (EStep.Expect).
	Bound float64
	// Iters counts the E-step's fixed-point iterations over the documents.
	Iters int64
	// Batches counts the batches added by passes (PassFrom skips them).
	Batches int64

	// nLo, suffLo and boundLo are the low words of the exact totals of N,
	// Suff and Bound (see implicit.FixedScale).
	nLo, suffLo []uint64
	boundLo     uint64
	// warm, when set, starts the E-step of each document it holds where
	// its last one ended (the sample's passes; em_sample.go).
	warm *warmStarts
}

// The resolutions of EMAcc's exact totals: 2^emExpN for the expected
// counts, 2^emExpSum for the weights' statistics and the bound. A
// document's contribution below them is dropped: less than 2^-32 (2.3e-10)
// of a token per word and topic, 2^-40 of a nat in the bound (its float64
// rounding alone is 2^-40 relative for a document's bound of 2^12).
const (
	emExpN   = -32
	emExpSum = -40
	// emUnitN is 2^-emExpN: an expected count x is the integer
	// int64(x·emUnitN) of the grid; emMaxBatch bounds a batch's tokens.
	emUnitN    = 1 << -emExpN
	emMaxBatch = 1 << 31
)

var (
	emScaleN   = implicit.NewFixedScale(emExpN)
	emScaleSum = implicit.NewFixedScale(emExpSum)
)

// NewEMAcc returns empty statistics for d words and k topics.
func NewEMAcc(d, k int) *EMAcc {
	return &EMAcc{D: d, K: k, N: make([]float64, d*k), Suff: make([]float64, k), nLo: make([]uint64, d*k), suffLo: make([]uint64, k)}
}

// ensureLo allocates the low words of an EMAcc made without NewEMAcc.
func (a *EMAcc) ensureLo() {
	if a.nLo == nil {
		a.nLo = make([]uint64, len(a.N))
	}
	if a.suffLo == nil {
		a.suffLo = make([]uint64, len(a.Suff))
	}
}

// arrays returns a's exact totals, the bound as a one-value array in
// bound (written back by the caller).
func (a *EMAcc) arrays(bound []float64, boundLo []uint64) []implicit.FixedArray {
	a.ensureLo()
	return []implicit.FixedArray{
		{Name: "em.n", V: a.N, Lo: a.nLo, Scale: emScaleN},
		{Name: "em.suff", V: a.Suff, Lo: a.suffLo, Scale: emScaleSum},
		{Name: "em.bound", V: bound, Lo: boundLo, Scale: emScaleSum},
	}
}

// Merge adds o into a, exactly: the result does not depend on the order
// of merges.
func (a *EMAcc) Merge(o *EMAcc) error {
	if a.D != o.D || a.K != o.K {
		return fmt.Errorf("%w: EM statistics of d=%d, k=%d and d=%d, k=%d", statsfile.ErrIncompatible, a.D, a.K, o.D, o.K)
	}
	b, blo := []float64{a.Bound}, []uint64{a.boundLo}
	ob, oblo := []float64{o.Bound}, []uint64{o.boundLo}
	mine, theirs := a.arrays(b, blo), o.arrays(ob, oblo)
	for i := range mine {
		if err := mine[i].Merge(theirs[i]); err != nil {
			return err
		}
	}
	a.Bound, a.boundLo = b[0], blo[0]
	a.Docs += o.Docs
	a.Tokens += o.Tokens
	a.Empty += o.Empty
	a.Iters += o.Iters
	a.Batches += o.Batches
	return nil
}

// emPart is one worker's reduction of a batch: its own E-step and the
// batch's rows of N, one per distinct word (slot[w]−1 is w's row, 0: none),
// as exact totals (high parts and low words) of the documents'
// contributions.
type emPart struct {
	es    *EStep
	slot  []int32
	terms []int32 // the batch's distinct words, in order of first use
	rows  []int64 // expected counts in units of 2^emExpN
	// touched marks, per row, the topics a document added to (mw words of
	// bits a row): a piece of few documents touches few of a word's k
	// topics, and its commit adds those alone.
	touched             []uint64
	mw                  int
	suff                []float64
	suffLo              []uint64
	bound               [1]float64
	boundLo             [1]uint64
	badBound            float64 // a document's bound that is not finite
	overflow            bool
	docs, tokens, empty int64
	iters               int64
	start               int64 // the batch's first document
	n                   int   // the batch's documents
}

// EMPieceEntries is the most entries (distinct words of documents) of the
// pieces an EM pass cuts its batches into; a worker's expected counts of a
// piece are a row of k for each of its distinct words. A corpus of long
// documents comes in few batches, and batch i goes to worker i mod
// workers, so without pieces one worker could do most of a pass. The EM
// statistics are exact, so pieces change nothing but the schedule.
const EMPieceEntries = 1 << 18

// Pass adds one pass over docs with the E-step for p, on workers
// goroutines; each document's contribution is added exactly (see EMAcc),
// so the statistics do not depend on workers or batches. onBatch is told
// each batch's number of documents, in order.
func (a *EMAcc) Pass(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, p *TopicParams, onBatch func(docs int)) error {
	return a.PassFrom(ctx, docs, workers, p, onBatch, implicit.PassOptions{})
}

// PassFrom is Pass resumed and saved as implicit.PassOptions say: it skips the first
// opt.Skip batches (those a already holds, Batches) and calls opt.Snapshot,
// at most once every opt.SnapshotEvery, after a batch has been added; the
// totals are then consistent (Encode may save them). A pass resumed from a
// snapshot ends with the totals of an uninterrupted one, bit for bit.
func (a *EMAcc) PassFrom(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, p *TopicParams, onBatch func(docs int), opt implicit.PassOptions) error {
	if p.K != a.K || p.D != a.D {
		return fmt.Errorf("lda: EM statistics of d=%d, k=%d for parameters of d=%d, k=%d", a.D, a.K, p.D, p.K)
	}
	if err := p.Check(); err != nil {
		return err
	}
	k := a.K
	last := time.Now()
	// During the pass the totals hold high parts (raw), between batches'
	// commits and after it rounded values.
	bound, boundLo := []float64{a.Bound}, []uint64{a.boundLo}
	arrays := a.arrays(bound, boundLo)
	high := func() {
		for _, x := range arrays {
			x.High()
		}
	}
	rounded := func() {
		for _, x := range arrays {
			x.Rounded()
		}
		a.Bound, a.boundLo = bound[0], boundLo[0]
	}
	high()
	defer rounded()
	nTot, sTot, bTot := arrays[0], arrays[1], arrays[2]
	return implicit.InOrder(ctx, implicit.SkipBatches(implicit.SplitBatches(docs, EMPieceEntries), opt.Skip), workers,
		func() *emPart {
			return &emPart{es: NewEStep(p), slot: make([]int32, a.D), suff: make([]float64, k), suffLo: make([]uint64, k), mw: (k + 63) / 64}
		},
		func(q *emPart, b *stream.Docs) {
			q.terms, q.rows, q.touched = q.terms[:0], q.rows[:0], q.touched[:0]
			clear(q.suff)
			clear(q.suffLo)
			q.bound, q.boundLo, q.badBound, q.overflow = [1]float64{}, [1]uint64{}, 0, false
			q.docs, q.tokens, q.empty, q.iters, q.start, q.n = 0, 0, 0, 0, b.Start, b.Len()
			ok := true
			for i := range b.Len() {
				terms, counts := b.Doc(i)
				l := b.Length(i)
				if l == 0 {
					q.empty++
					continue
				}
				q.docs++
				q.tokens += l
				var bd float64
				if a.warm != nil {
					bd = a.warm.expect(q.es, b.Start+int64(i), terms, counts)
				} else {
					bd = q.es.Expect(terms, counts)
				}
				if math.IsNaN(bd) || math.IsInf(bd, 0) {
					q.badBound = bd
					return
				}
				ok = emScaleSum.Fold(q.bound[:], []float64{bd}, q.boundLo[:]) && ok
				q.iters += int64(q.es.Iters)
				ok = emScaleSum.Fold(q.suff, q.es.Suff(), q.suffLo) && ok
				for w, t := range terms {
					s := q.slot[t]
					if s == 0 {
						q.terms = append(q.terms, t)
						// Rows and marks beyond the batch's are zero: the
						// commit zeroes what it adds.
						n, nm := len(q.rows), len(q.touched)
						q.rows = slices.Grow(q.rows, k)[:n+k]
						q.touched = slices.Grow(q.touched, q.mw)[:nm+q.mw]
						s = int32(len(q.terms))
						q.slot[t] = s
					}
					// c_w φ_wj ≥ 0 over the topics the document's E-step
					// kept, truncated to the grid; the batch's sums stay
					// below 2^63 (emMaxBatch tokens).
					row := q.rows[int(s-1)*k : int(s)*k]
					mask := q.touched[int(s-1)*q.mw : int(s)*q.mw]
					topics, phi := q.es.PhiSparse(w)
					for p, j := range topics {
						row[j] += int64(phi[p] * emUnitN)
						mask[j>>6] |= 1 << (j & 63)
					}
				}
			}
			q.overflow = !ok
		},
		func(q *emPart) error {
			if q.badBound != 0 {
				for _, t := range q.terms {
					q.slot[t] = 0
				}
				clear(q.rows)
				clear(q.touched)
				return fmt.Errorf("lda: the E-step's bound is %g in the batch from document %d", q.badBound, q.start)
			}
			ok := !q.overflow && q.tokens < emMaxBatch
			for s, t := range q.terms {
				off := int(t) * k
				row := q.rows[s*k : (s+1)*k]
				mask := q.touched[s*q.mw : (s+1)*q.mw]
				for i, m := range mask {
					for ; m != 0; m &= m - 1 {
						j := i<<6 | bits.TrailingZeros64(m)
						ok = emScaleN.AddUnit(&nTot.V[off+j], &nTot.Lo[off+j], row[j]) && ok
						row[j] = 0
					}
				}
				clear(mask)
				q.slot[t] = 0
			}
			ok = addFixedRows(emScaleSum, sTot.V, sTot.Lo, q.suff, q.suffLo) && ok
			ok = addFixedRows(emScaleSum, bTot.V, bTot.Lo, q.bound[:], q.boundLo[:]) && ok
			if !ok {
				return fmt.Errorf("%w: EM statistics, in the batch from document %d", implicit.ErrOverflow, q.start)
			}
			a.Docs += q.docs
			a.Tokens += q.tokens
			a.Empty += q.empty
			a.Iters += q.iters
			a.Batches++
			if a.warm != nil {
				a.warm.commit(q.start, q.n)
			}
			if onBatch != nil {
				onBatch(q.n)
			}
			if opt.Snapshot != nil && time.Since(last) >= opt.SnapshotEvery {
				last = time.Now()
				rounded()
				err := opt.Snapshot(a.Batches)
				high()
				return err
			}
			return nil
		})
}

// addFixedRows adds the exact totals (v, lo), high parts, to (dst, dlo),
// high parts of the same resolution s. It reports false when a total
// leaves the exact range.
func addFixedRows(s implicit.FixedScale, dst []float64, dlo []uint64, v []float64, lo []uint64) bool {
	ok := true
	for j := range v {
		ok = s.AddHigh(&dst[j], &dlo[j], v[j], lo[j]) && ok
	}
	return ok
}

// crcTable is CRC-32C's, the checksum of an encoded EMAcc.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// emMagic opens an encoded EMAcc.
const emMagic = "SFEMACC2"

// emAccHeader is the JSON line after emMagic: the shape and the counts.
type emAccHeader struct {
	D, K                int
	Docs, Tokens, Empty int64
	Iters, Batches      int64
	Bound               float64
	BoundLo             uint64
}

// Encode writes a to w: the magic "SFEMACC2", a JSON line with the shape,
// counts and bound, then N and Suff as little-endian float64, bit for bit,
// their exact totals' low words as little-endian uint64, and the CRC-32C of
// everything before it. DecodeEMAcc reads it back, so
// shards' statistics can be merged in another process.
func (a *EMAcc) Encode(w io.Writer) error {
	h, err := json.Marshal(emAccHeader{D: a.D, K: a.K, Docs: a.Docs, Tokens: a.Tokens, Empty: a.Empty, Iters: a.Iters, Batches: a.Batches, Bound: a.Bound, BoundLo: a.boundLo})
	if err != nil {
		return err
	}
	crc := crc32.New(crcTable)
	bw := bufio.NewWriter(io.MultiWriter(w, crc))
	bw.WriteString(emMagic)
	bw.Write(append(h, '\n'))
	a.ensureLo()
	writeFloats(bw, a.N, a.Suff)
	writeWords(bw, a.nLo, a.suffLo)
	if err := bw.Flush(); err != nil {
		return err
	}
	var buf [4]byte
	binary.LittleEndian.PutUint32(buf[:], crc.Sum32())
	_, err = w.Write(buf[:])
	return err
}

// DecodeEMAcc reads statistics written by Encode, checking their shape and
// checksum.
func DecodeEMAcc(r io.Reader) (*EMAcc, error) {
	crc := crc32.New(crcTable)
	tr := io.TeeReader(bufio.NewReader(r), crc)
	magic := make([]byte, len(emMagic))
	if _, err := io.ReadFull(tr, magic); err != nil || string(magic) != emMagic {
		return nil, errors.New("lda: not EM statistics (bad magic)")
	}
	var line []byte
	var b [8]byte
	for {
		if _, err := io.ReadFull(tr, b[:1]); err != nil {
			return nil, fmt.Errorf("lda: EM statistics: %w", statsfile.ErrTruncated)
		}
		if b[0] == '\n' {
			break
		}
		if line = append(line, b[0]); len(line) > statsfile.MaxHeader {
			return nil, errors.New("lda: EM statistics: header too long")
		}
	}
	var h emAccHeader
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, fmt.Errorf("lda: EM statistics: %w", err)
	}
	if h.D < 1 || h.K < 1 || h.D > 1<<28/h.K {
		return nil, fmt.Errorf("lda: EM statistics of d=%d, k=%d", h.D, h.K)
	}
	a := NewEMAcc(h.D, h.K)
	a.Docs, a.Tokens, a.Empty, a.Iters, a.Batches, a.Bound, a.boundLo = h.Docs, h.Tokens, h.Empty, h.Iters, h.Batches, h.Bound, h.BoundLo
	if err := readFloats(tr, a.N, a.Suff); err != nil {
		return nil, fmt.Errorf("lda: EM statistics: %w", statsfile.ErrTruncated)
	}
	if err := readWords(tr, a.nLo, a.suffLo); err != nil {
		return nil, fmt.Errorf("lda: EM statistics: %w", statsfile.ErrTruncated)
	}
	sum := crc.Sum32()
	if _, err := io.ReadFull(tr, b[:4]); err != nil {
		return nil, fmt.Errorf("lda: EM statistics: %w", statsfile.ErrTruncated)
	}
	if binary.LittleEndian.Uint32(b[:4]) != sum {
		return nil, fmt.Errorf("lda: EM statistics: %w", statsfile.ErrChecksum)
	}
	return a, nil
}

// writeFloats writes the values of vs to w in order as little-endian
// float64, bit for bit; the first error is returned.
func writeFloats(w io.Writer, vs ...[]float64) error { return writeLE(w, math.Float64bits, vs) }

// readFloats fills vs in order with little-endian float64 read from r (as
// writeFloats wrote them).
func readFloats(r io.Reader, vs ...[]float64) error { return readLE(r, math.Float64frombits, vs) }

// writeWords and readWords are writeFloats and readFloats for the low
// words of exact totals.
func writeWords(w io.Writer, vs ...[]uint64) error { return writeLE(w, word, vs) }
func readWords(r io.Reader, vs ...[]uint64) error  { return readLE(r, word, vs) }

func word(x uint64) uint64 { return x }

// writeLE writes the values of vs to w in order as the little-endian
// 64-bit words bits gives; the first error is returned.
func writeLE[T any](w io.Writer, bits func(T) uint64, vs [][]T) error {
	var buf [8]byte
	for _, v := range vs {
		for _, x := range v {
			binary.LittleEndian.PutUint64(buf[:], bits(x))
			if _, err := w.Write(buf[:]); err != nil {
				return err
			}
		}
	}
	return nil
}

// readLE fills vs in order with the values from of the little-endian
// 64-bit words read from r.
func readLE[T any](r io.Reader, from func(uint64) T, vs [][]T) error {
	var buf [8]byte
	for _, v := range vs {
		for i := range v {
			if _, err := io.ReadFull(r, buf[:]); err != nil {
				return err
			}
			v[i] = from(binary.LittleEndian.Uint64(buf[:]))
		}
	}
	return nil
}

// Reset empties a for another pass (online EM's next mini-batch), keeping
// its memory.
func (a *EMAcc) Reset() {
	a.ensureLo()
	clear(a.N)
	clear(a.Suff)
	clear(a.nLo)
	clear(a.suffLo)
	a.Docs, a.Tokens, a.Empty, a.Iters, a.Batches = 0, 0, 0, 0, 0
	a.Bound, a.boundLo = 0, 0
}

// EMBound returns the sum of the documents' bounds (EStep.Expect) over docs
// with the E-step for p, and their tokens, on workers goroutines, without
// the expected counts: the score of held-out documents. The sum is exact (as
// EMAcc's Bound), so it does not depend on workers or batches.
func EMBound(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, p *TopicParams) (bound float64, tokens int64, err error) {
	return emBound(ctx, docs, workers, p, nil, false)
}

// emBound is EMBound with each document's E-step started from warm's
// starts, where warm is not nil, and, with record, the starts it ends with
// written as the next (warmStarts.expect; the caller swaps them).
func emBound(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, p *TopicParams, warm *warmStarts, record bool) (bound float64, tokens int64, err error) {
	if err := p.Check(); err != nil {
		return 0, 0, err
	}
	type part struct {
		es      *EStep
		bound   [1]float64
		lo      [1]uint64
		bad     float64
		ok      bool
		tokens  int64
		start   int64
		started bool
	}
	total, totalLo := []float64{0}, []uint64{0}
	err = implicit.InOrder(ctx, implicit.SplitBatches(docs, EMPieceEntries), workers,
		func() *part { return &part{es: NewEStep(p)} },
		func(q *part, b *stream.Docs) {
			q.bound, q.lo, q.bad, q.ok, q.tokens, q.start = [1]float64{}, [1]uint64{}, 0, true, 0, b.Start
			for i := range b.Len() {
				terms, counts := b.Doc(i)
				l := b.Length(i)
				if l == 0 {
					continue
				}
				q.tokens += l
				var bd float64
				if warm != nil {
					bd = warm.expectFrom(q.es, b.Start+int64(i), terms, counts, record)
				} else {
					bd = q.es.Expect(terms, counts)
				}
				if math.IsNaN(bd) || math.IsInf(bd, 0) {
					q.bad = bd
					return
				}
				q.ok = emScaleSum.Fold(q.bound[:], []float64{bd}, q.lo[:]) && q.ok
			}
		},
		func(q *part) error {
			if q.bad != 0 {
				return fmt.Errorf("lda: the E-step's bound is %g in the batch from document %d", q.bad, q.start)
			}
			if !addFixedRows(emScaleSum, total, totalLo, q.bound[:], q.lo[:]) || !q.ok {
				return fmt.Errorf("%w: the bound, in the batch from document %d", implicit.ErrOverflow, q.start)
			}
			tokens += q.tokens
			return nil
		})
	if err != nil {
		return 0, 0, err
	}
	return emScaleSum.Round(total[0], totalLo[0]), tokens, nil
}
