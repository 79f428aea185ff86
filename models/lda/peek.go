package lda

import (
	"context"
	"fmt"
	"iter"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/sketch"
	"github.com/streamfit/streamfit/stream"
)

// peekDocs and peekEntries bound the first documents the peek measures:
// pass 1 keeps a copy of them (headKeeper: a fixed amount of memory,
// whatever the number of documents), or, when pass 1 was resumed from a
// checkpoint, they are read again.
const (
	peekDocs    = 8192
	peekEntries = 1 << 20
)

// peekNegativeBelow is the smallest eigenvalue of WᵀM̂2W on the first
// documents below which Fit takes the power pass over the first sketch's
// range before the third-moment pass instead of after it. W whitens M̂2
// with the singular values of its sketch, so WᵀM̂2W is near I, with −1
// where W holds a negative direction: on real text that has one, the
// smallest eigenvalue on the first documents lies well below the
// threshold, and on text or generated corpora without one well above it.
// A false alarm costs a pass, not the model (rangePass checks).
const peekNegativeBelow = -0.25

// peekMode overrides the peek (Config.peek) so tests can take either
// branch on any corpus.
type peekMode int8

const (
	peekAuto  peekMode = iota // measure on the first documents
	peekOff                   // no peek: the third-moment pass finds out
	peekForce                 // a peek that says "negative" without reading
)

// peekNegative reports whether WᵀM̂2W, measured on the first documents of
// src (kept by pass 1, or read again when kept is nil: peekDocs and
// peekEntries), has an eigenvalue below peekNegativeBelow (b.w is W). On
// real text the first sketch's singular vectors take a large negative
// direction of M̂2 into W (near M̂1: the LDA correction exceeds the
// documents' word pairs there), and the third-moment pass then finds
// WᵀM̂2W indefinite (negativeError) after paying for the whitened cubes of
// every document; the first documents show the same direction (eigenvalues
// −0.6 to −1.2 against +1 on the corpora measured), so Fit takes the power
// pass first. The answer is only a hint: rangePass checks it on the whole
// data, and a W that holds no negative direction there is kept (Fit then
// gives the model it gives without the peek, one pass later).
func peekNegative(ctx context.Context, src stream.DocSource, kept *stream.Docs, b *basis, cfg Config) (bool, error) {
	if cfg.peek != peekAuto {
		return cfg.peek == peekForce, nil
	}
	d, k := b.w.Dims()
	acc := implicit.NewPairAcc(d, k)
	acc.Float32 = !cfg.float64Sums
	docs := headDocs(src, peekDocs, peekEntries)
	if kept != nil {
		docs = chunkSeq([]*stream.Docs{kept})
	}
	err := stage(ctx, "peek", func(ctx context.Context) error {
		return acc.Pass(ctx, docs, cfg.Workers, b.w, nil)
	})
	if err != nil {
		return false, fmt.Errorf("lda: reading the first documents: %w", err)
	}
	if acc.Docs == 0 {
		return false, nil
	}
	y, err := m2Times(acc, cfg.m2Coef(), b.w, true)
	if err != nil {
		return false, fmt.Errorf("lda: %w", err)
	}
	vals, _, err := sketch.Ritz(b.w, y, 1)
	if err != nil {
		return false, fmt.Errorf("lda: %w", err)
	}
	return vals[len(vals)-1] < peekNegativeBelow, nil
}

// headDocs is src's first documents, up to n of them and m entries (the
// last batch cut to fit), as a pass: a source's iteration stops when its
// loop is left.
func headDocs(src stream.DocSource, n, m int) func(context.Context) iter.Seq2[*stream.Docs, error] {
	return func(ctx context.Context) iter.Seq2[*stream.Docs, error] {
		return func(yield func(*stream.Docs, error) bool) {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			var h head
			for b, err := range src.Docs(ctx) {
				if err != nil {
					yield(nil, err)
					return
				}
				// A copy: the pass may hold a batch after yield returns,
				// and b goes back to its pool.
				cut := h.take(nil, b, n, m)
				b.Release()
				if !yield(cut, nil) || h.full(n, m) {
					return
				}
			}
		}
	}
}

// head counts the first documents and entries taken from a pass.
type head struct{ docs, entries int }

// full reports whether n documents or m entries were taken.
func (h *head) full(n, m int) bool { return h.docs >= n || h.entries >= m }

// take appends to dst (nil: a new batch) a copy of b's first documents
// that fit within n documents and m entries in all (at least one document
// while none was taken), and returns dst.
func (h *head) take(dst, b *stream.Docs, n, m int) *stream.Docs {
	i := 0
	for i < b.Len() && h.docs+i < n && (h.entries+b.Offsets[i+1] <= m || h.docs+i == 0) {
		i++
	}
	end := b.Offsets[i]
	h.docs += i
	h.entries += end
	if dst == nil {
		dst = &stream.Docs{Start: b.Start, Offsets: []int{0}}
	}
	base := dst.Offsets[len(dst.Offsets)-1]
	for _, o := range b.Offsets[1 : i+1] {
		dst.Offsets = append(dst.Offsets, base+o)
	}
	dst.Terms = append(dst.Terms, b.Terms[:end]...)
	dst.Counts = append(dst.Counts, b.Counts[:end]...)
	return dst
}

// headKeeper is src as pass 1 reads it, keeping a copy of its first
// documents (peekDocs, peekEntries) for the peek, so that it costs no read.
type headKeeper struct {
	stream.DocSource
	kept *stream.Docs // after a pass that ran to its end
}

func (k *headKeeper) Docs(ctx context.Context) iter.Seq2[*stream.Docs, error] {
	return func(yield func(*stream.Docs, error) bool) {
		var h head
		var kept *stream.Docs
		for b, err := range k.DocSource.Docs(ctx) {
			if err == nil && b != nil && !h.full(peekDocs, peekEntries) {
				kept = h.take(kept, b, peekDocs, peekEntries)
			}
			if !yield(b, err) {
				return
			}
		}
		k.kept = kept
	}
}
