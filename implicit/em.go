package implicit

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
	"slices"
	"time"

	"github.com/streamfit/streamfit/stream"
)

// EMAcc holds the statistics of one variational EM pass for fixed topic
// parameters (TopicParams): the expected word-topic counts, the weights'
// sufficient statistics and the bound, summed over the documents. They are
// additive: the statistics of two shards merge (Merge) into those of their
// union, also across processes (Encode, DecodeEMAcc), and the M-step needs
// nothing else. Memory is d·k. Unlike the moment statistics, the totals are
// plain float64 sums (in batch order within a pass), not exact ones: merged
// shards agree with one pass to rounding, not bit for bit.
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
}

// NewEMAcc returns empty statistics for d words and k topics.
func NewEMAcc(d, k int) *EMAcc {
	return &EMAcc{D: d, K: k, N: make([]float64, d*k), Suff: make([]float64, k)}
}

// Merge adds o into a.
func (a *EMAcc) Merge(o *EMAcc) error {
	if a.D != o.D || a.K != o.K {
		return fmt.Errorf("%w: EM statistics of d=%d, k=%d and d=%d, k=%d", ErrIncompatible, a.D, a.K, o.D, o.K)
	}
	a.Docs += o.Docs
	a.Tokens += o.Tokens
	a.Empty += o.Empty
	addTo(a.N, o.N)
	addTo(a.Suff, o.Suff)
	a.Bound += o.Bound
	a.Iters += o.Iters
	a.Batches += o.Batches
	return nil
}

// emPart is one worker's reduction of a batch: its own E-step and the
// batch's rows of N, one per distinct word (slot[w]−1 is w's row, 0: none).
type emPart struct {
	es                  *EStep
	slot                []int32
	terms               []int32 // the batch's distinct words, in order of first use
	rows                []float64
	suff                []float64
	bound               float64
	docs, tokens, empty int64
	iters               int64
	start               int64 // the batch's first document
	n                   int   // the batch's documents
}

// Pass adds one pass over docs with the E-step for p, on workers
// goroutines; each batch's partial sums are added to the totals in batch
// order, so the statistics do not depend on workers. onBatch is told each
// batch's number of documents, in order.
func (a *EMAcc) Pass(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, p *TopicParams, onBatch func(docs int)) error {
	return a.PassFrom(ctx, docs, workers, p, onBatch, PassOptions{})
}

// PassFrom is Pass resumed and saved as PassOptions say: it skips the first
// opt.Skip batches (those a already holds, Batches) and calls opt.Snapshot,
// at most once every opt.SnapshotEvery, after a batch has been added; the
// totals are then consistent (Encode may save them). A pass resumed from a
// snapshot ends with the totals of an uninterrupted one, bit for bit: the
// remaining batches are added in the same order.
func (a *EMAcc) PassFrom(ctx context.Context, docs func(context.Context) iter.Seq2[*stream.Docs, error], workers int, p *TopicParams, onBatch func(docs int), opt PassOptions) error {
	if p.K != a.K || p.D != a.D {
		return fmt.Errorf("implicit: EM statistics of d=%d, k=%d for parameters of d=%d, k=%d", a.D, a.K, p.D, p.K)
	}
	if err := p.Check(); err != nil {
		return err
	}
	k := a.K
	last := time.Now()
	return InOrder(ctx, skipBatches(docs, opt.Skip), workers,
		func() *emPart {
			return &emPart{es: NewEStep(p), slot: make([]int32, a.D), suff: make([]float64, k)}
		},
		func(q *emPart, b *stream.Docs) {
			q.terms, q.rows = q.terms[:0], q.rows[:0]
			clear(q.suff)
			q.bound, q.docs, q.tokens, q.empty, q.iters, q.start, q.n = 0, 0, 0, 0, 0, b.Start, b.Len()
			for i := range b.Len() {
				terms, counts := b.Doc(i)
				l := b.Length(i)
				if l == 0 {
					q.empty++
					continue
				}
				q.docs++
				q.tokens += l
				q.bound += q.es.Expect(terms, counts)
				q.iters += int64(q.es.Iters)
				addTo(q.suff, q.es.Suff())
				for w, t := range terms {
					s := q.slot[t]
					if s == 0 {
						q.terms = append(q.terms, t)
						n := len(q.rows)
						q.rows = slices.Grow(q.rows, k)[:n+k]
						clear(q.rows[n:])
						s = int32(len(q.terms))
						q.slot[t] = s
					}
					q.es.AddPhi(w, q.rows[int(s-1)*k:int(s)*k])
				}
			}
		},
		func(q *emPart) error {
			if math.IsNaN(q.bound) || math.IsInf(q.bound, 0) {
				return fmt.Errorf("implicit: the E-step's bound is %g in the batch from document %d", q.bound, q.start)
			}
			for s, t := range q.terms {
				addTo(a.N[int(t)*k:int(t+1)*k], q.rows[s*k:(s+1)*k])
				q.slot[t] = 0
			}
			addTo(a.Suff, q.suff)
			a.Bound += q.bound
			a.Docs += q.docs
			a.Tokens += q.tokens
			a.Empty += q.empty
			a.Iters += q.iters
			a.Batches++
			if onBatch != nil {
				onBatch(q.n)
			}
			if opt.Snapshot != nil && time.Since(last) >= opt.SnapshotEvery {
				last = time.Now()
				return opt.Snapshot(a.Batches)
			}
			return nil
		})
}

// emMagic opens an encoded EMAcc.
const emMagic = "SFEMACC1"

// emHeader is the JSON line after emMagic: the shape and the counts.
type emHeader struct {
	D, K                int
	Docs, Tokens, Empty int64
	Iters, Batches      int64
	Bound               float64
}

// Encode writes a to w: the magic "SFEMACC1", a JSON line with the shape,
// counts and bound, then N and Suff as little-endian float64, bit for bit,
// and the CRC-32C of everything before it. DecodeEMAcc reads it back, so
// shards' statistics can be merged in another process.
func (a *EMAcc) Encode(w io.Writer) error {
	h, err := json.Marshal(emHeader{D: a.D, K: a.K, Docs: a.Docs, Tokens: a.Tokens, Empty: a.Empty, Iters: a.Iters, Batches: a.Batches, Bound: a.Bound})
	if err != nil {
		return err
	}
	crc := crc32.New(crcTable)
	bw := bufio.NewWriter(io.MultiWriter(w, crc))
	bw.WriteString(emMagic)
	bw.Write(append(h, '\n'))
	WriteFloats(bw, a.N, a.Suff)
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
		return nil, errors.New("implicit: not EM statistics (bad magic)")
	}
	var line []byte
	var b [8]byte
	for {
		if _, err := io.ReadFull(tr, b[:1]); err != nil {
			return nil, fmt.Errorf("implicit: EM statistics: %w", ErrStatsTrunc)
		}
		if b[0] == '\n' {
			break
		}
		if line = append(line, b[0]); len(line) > maxHeader {
			return nil, errors.New("implicit: EM statistics: header too long")
		}
	}
	var h emHeader
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, fmt.Errorf("implicit: EM statistics: %w", err)
	}
	if h.D < 1 || h.K < 1 || h.D > 1<<28/h.K {
		return nil, fmt.Errorf("implicit: EM statistics of d=%d, k=%d", h.D, h.K)
	}
	a := NewEMAcc(h.D, h.K)
	a.Docs, a.Tokens, a.Empty, a.Iters, a.Batches, a.Bound = h.Docs, h.Tokens, h.Empty, h.Iters, h.Batches, h.Bound
	if err := ReadFloats(tr, a.N, a.Suff); err != nil {
		return nil, fmt.Errorf("implicit: EM statistics: %w", ErrStatsTrunc)
	}
	sum := crc.Sum32()
	if _, err := io.ReadFull(tr, b[:4]); err != nil {
		return nil, fmt.Errorf("implicit: EM statistics: %w", ErrStatsTrunc)
	}
	if binary.LittleEndian.Uint32(b[:4]) != sum {
		return nil, fmt.Errorf("implicit: EM statistics: %w", ErrStatsChecksum)
	}
	return a, nil
}

// WriteFloats writes the values of vs to w in order as little-endian
// float64, bit for bit; the first error is returned.
func WriteFloats(w io.Writer, vs ...[]float64) error {
	var buf [8]byte
	for _, v := range vs {
		for _, x := range v {
			binary.LittleEndian.PutUint64(buf[:], math.Float64bits(x))
			if _, err := w.Write(buf[:]); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReadFloats fills vs in order with little-endian float64 read from r (as
// WriteFloats wrote them).
func ReadFloats(r io.Reader, vs ...[]float64) error {
	var buf [8]byte
	for _, v := range vs {
		for i := range v {
			if _, err := io.ReadFull(r, buf[:]); err != nil {
				return err
			}
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[:]))
		}
	}
	return nil
}
