package docword

import (
	"context"
	"errors"
	"iter"
	"os"

	"github.com/streamfit/streamfit/stream"
)

// Source is a docword file opened for reading; every call to Docs is a pass
// that reopens the file. It is safe to run passes one after another, or
// concurrently.
type Source struct {
	path  string
	opts  stream.Options
	h     header
	info  stream.Info
	chunk int // bytes per chunk handed to a worker
}

// defaultChunk is the size of the pieces a pass is cut into: large enough that
// handing one to a worker costs nothing next to parsing it, small enough that
// 2×workers of them in flight stay a few MB.
const defaultChunk = 2 << 20

// Open reads the header of a docword file (and the vocabulary named by
// o.VocabPath, whose length must equal W) and returns a source over it.
func Open(path string, o stream.Options) (*Source, error) {
	o = o.WithDefaults()
	h, err := readHeader(path)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	s := &Source{path: path, opts: o, h: h, chunk: defaultChunk}
	s.info = stream.Info{Path: path, Format: "docword", Terms: int(h.W), Rows: h.D, NNZ: h.NNZ, Bytes: st.Size()}
	if o.VocabPath != "" {
		words, err := stream.ReadVocab(o.VocabPath)
		if err != nil {
			return nil, err
		}
		if int64(len(words)) != h.W {
			return nil, stream.Errorf(path, 2, -1, "", stream.ErrValue, "header says W=%d words but the vocabulary %s has %d", h.W, o.VocabPath, len(words))
		}
		s.info.Vocab = words
	}
	return s, nil
}

// Info describes the file from its header: Rows is D, Terms is W, NNZ is the
// header's NNZ (entries with count 0 are counted there but not delivered).
func (s *Source) Info() stream.Info { return s.info }

// Docs makes one pass over the file: documents 1..D as rows 0..D-1, in batches
// of about Options.BatchRows documents.
func (s *Source) Docs(ctx context.Context) iter.Seq2[*stream.Docs, error] {
	return func(yield func(*stream.Docs, error) bool) {
		st := &stitcher{s: s, ctx: ctx, yield: yield, cur: stream.NewDocs(0)}
		for p, err := range stream.Ordered(ctx, s.opts.Workers, s.split, s.parse, s.release) {
			if err != nil {
				st.cur.Release()
				yield(nil, err)
				return
			}
			err := st.add(p)
			s.release(p)
			if err != nil {
				st.cur.Release()
				if !errors.Is(err, errStopped) {
					yield(nil, err)
				}
				return
			}
		}
		if err := st.finish(); err != nil {
			st.cur.Release()
			if !errors.Is(err, errStopped) {
				yield(nil, err)
			}
		}
	}
}

// release hands a parsed chunk's memory back.
func (s *Source) release(p *part) {
	putBuf(p.ch.buf)
	p.ch = chunk{}
	partPool.Put(p)
}

// errStopped says the consumer broke out of the loop.
var errStopped = errors.New("stopped by the consumer")
