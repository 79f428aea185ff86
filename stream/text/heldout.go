package text

import (
	"context"
	"fmt"
	"iter"

	"github.com/streamfit/streamfit/stream"
)

// HeldOut splits src by position into a training and a held-out source:
// document i is held out when i%every == every−1 (every 10th document for
// every = 10, counting from 1), and is in training otherwise. Both read
// src, so each pass of either is a pass over src; documents keep their
// order and are numbered from 0 within each part. every must be at least 2.
func HeldOut(src stream.TextSource, every int) (train, test stream.TextSource) {
	if every < 2 {
		panic(fmt.Sprintf("text: HeldOut every %d, want at least 2", every))
	}
	return &part{src: src, every: int64(every)}, &part{src: src, every: int64(every), test: true}
}

// part is one side of HeldOut.
type part struct {
	src   stream.TextSource
	every int64
	test  bool
}

// before returns the number of documents of this part among src's first n.
func (p *part) before(n int64) int64 {
	if p.test {
		return n / p.every
	}
	return n - n/p.every
}

// keeps reports whether src's document i belongs to this part.
func (p *part) keeps(i int64) bool { return (i%p.every == p.every-1) == p.test }

// Info is src's, with the number of documents of this part when src knows
// its own.
func (p *part) Info() stream.Info {
	info := p.src.Info()
	if info.Rows >= 0 {
		info.Rows = p.before(info.Rows)
	}
	return info
}

// Texts is one pass over src keeping this part's documents.
func (p *part) Texts(ctx context.Context) iter.Seq2[*stream.Texts, error] {
	return func(yield func(*stream.Texts, error) bool) {
		for b, err := range p.src.Texts(ctx) {
			if err != nil {
				yield(nil, err)
				return
			}
			out := &stream.Texts{Start: p.before(b.Start)}
			for j, s := range b.Text {
				if p.keeps(b.Start + int64(j)) {
					out.Text = append(out.Text, s)
				}
			}
			if len(out.Text) > 0 && !yield(out, nil) {
				return
			}
		}
	}
}
