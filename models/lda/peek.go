package lda

import (
	"context"
	"fmt"
	"iter"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/mat"
)

// peekDocs is how many of the first documents Fit reads, before its first
// third-moment pass, to see whether the whitening W from the first sketch
// holds a negative direction of M̂2 (peekNegative): at most an eighth of a
// source that knows its document count, and at least peekMinDocs, so that
// on a small corpus the read costs a small part of a pass.
func peekDocs(info stream.Info) int {
	const most = 8192
	if info.Rows <= 0 {
		return most
	}
	return int(min(most, max(peekMinDocs, info.Rows/8)))
}

// peekMinDocs is the fewest documents a peek reads.
const peekMinDocs = 1024

// peekNegativeBelow is the smallest eigenvalue of WᵀM̂2W on the first
// documents below which Fit takes the power pass over the first sketch's
// range before the third-moment pass instead of after it. W whitens M̂2
// with the singular values of its sketch, so WᵀM̂2W is near I, with −1
// where W holds a negative direction: on the first 8,192 documents the
// smallest eigenvalue was −0.53, −0.73, −1.10, −1.17 (Debian descriptions,
// k = 10, 20, 50, 100) and −0.84, −1.20 (SpamAssassin, k = 50, 100, all
// of its 5,442 documents), against +0.66 and +0.21 on SpamAssassin at
// k = 10, 20 (no negative direction) and +0.53 and +0.60 on generated
// corpora (corpus M; 50,000 documents of mean length 50, k=20). On the
// first 1,024 documents: −0.81 … −2.53 (Debian), −0.82 and −2.10
// (SpamAssassin k = 50, 100) against +0.001 and −0.13 (k = 10, 20). A
// false alarm costs a pass, not the model (rangePass checks).
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
// src (peekDocs), has an eigenvalue below peekNegativeBelow (b.w is W). On real text the first sketch's singular vectors take
// a large negative direction of M̂2 into W (near M̂1: the LDA correction
// exceeds the documents' word pairs there), and the third-moment pass then
// finds WᵀM̂2W indefinite (negativeError) after paying for the whitened
// cubes of every document; the first documents show the same direction
// (eigenvalues −0.6 to −1.2 against +1 on the corpora measured), so Fit
// takes the power pass first. The answer is only a hint: rangePass checks
// it on the whole data, and a W that holds no negative direction there is
// kept (Fit then gives the model it gives without the peek, one pass
// later).
func peekNegative(ctx context.Context, src stream.DocSource, b *basis, cfg Config) (bool, error) {
	if cfg.peek != peekAuto {
		return cfg.peek == peekForce, nil
	}
	d, k := b.w.Dims()
	acc := implicit.NewPairAcc(d, k)
	acc.Float32 = !cfg.float64Sums
	err := stage(ctx, "peek", func(ctx context.Context) error {
		return acc.Pass(ctx, headDocs(src, peekDocs(src.Info())), cfg.Workers, b.w, nil)
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
	vals, ok := symEigenvalues(b.w, y)
	if !ok {
		return false, nil
	}
	return vals[0] < peekNegativeBelow, nil
}

// symEigenvalues returns the eigenvalues (ascending) of the symmetric part
// of qᵀy, where q and y are d×k.
func symEigenvalues(q, y mat.Matrix) ([]float64, bool) {
	var g mat.Dense
	g.Mul(q.T(), y)
	k, _ := g.Dims()
	s := mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			s.SetSym(i, j, (g.At(i, j)+g.At(j, i))/2)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(s, false) {
		return nil, false
	}
	return es.Values(nil), true
}

// headDocs is src's first n documents (the last batch cut to fit) as a
// pass: a source's iteration stops when its loop is left.
func headDocs(src stream.DocSource, n int) func(context.Context) iter.Seq2[*stream.Docs, error] {
	return func(ctx context.Context) iter.Seq2[*stream.Docs, error] {
		return func(yield func(*stream.Docs, error) bool) {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			seen := 0
			for b, err := range src.Docs(ctx) {
				if err != nil {
					yield(nil, err)
					return
				}
				if rest := n - seen; b.Len() > rest {
					// A copy of the documents that fit: the pass may hold a
					// batch after yield returns, and b goes back to its pool.
					end := b.Offsets[rest]
					cut := &stream.Docs{Start: b.Start, Offsets: append([]int(nil), b.Offsets[:rest+1]...),
						Terms: append([]int32(nil), b.Terms[:end]...), Counts: append([]int32(nil), b.Counts[:end]...)}
					b.Release()
					b = cut
				}
				seen += b.Len()
				if !yield(b, nil) || seen >= n {
					return
				}
			}
		}
	}
}
