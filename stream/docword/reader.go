package docword

import (
	"context"
	"errors"
	"iter"

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
	// stamp is the file as Open found it; every pass checks it is still so.
	stamp stream.Stamp
}

// defaultChunk is the size of the pieces a pass is cut into: large enough that
// handing one to a worker costs nothing next to parsing it, small enough that
// 2×workers of them in flight stay a few MB (and the pass's peak RSS low).
const defaultChunk = 1 << 20

// Open reads the header of a docword file (and the vocabulary named by
// o.VocabPath, whose length must equal W) and returns a source over it.
// Without o.VocabPath, a vocabulary file at VocabPath(path), such as
// vocab.nips.txt beside docword.nips.txt, is read if it exists.
func Open(path string, o stream.Options) (*Source, error) {
	o = o.WithDefaults()
	h, err := readHeader(path)
	if err != nil {
		return nil, err
	}
	st, err := stream.StatFile(path)
	if err != nil {
		return nil, err
	}
	stamp, err := stream.StampFile(path, nil)
	if err != nil {
		return nil, err
	}
	s := &Source{path: path, opts: o, h: h, chunk: defaultChunk, stamp: stamp}
	s.info = stream.Info{Path: path, Format: "docword", Terms: int(h.W), Rows: h.D, NNZ: h.NNZ, Bytes: st.Size(), Checksum: checksumOf(path)}
	if h.market {
		s.info.Layout = "matrix-market"
	}
	vpath := o.VocabPath
	if vpath == "" {
		// The UCI convention: vocab.X.txt beside docword.X.txt (what Writer
		// writes), picked up when no vocabulary is named.
		if v := VocabPath(path); fileExists(v) {
			vpath = v
		}
	}
	if vpath != "" {
		words, err := stream.ReadVocab(vpath)
		if err != nil {
			return nil, err
		}
		if int64(len(words)) != h.W {
			hint := ""
			if o.VocabPath == "" {
				hint = " (found beside the file; name another vocabulary to use it instead)"
			}
			return nil, stream.Errorf(path, 2, -1, "", stream.ErrValue, "header says W=%d words but the vocabulary %s has %d%s", h.W, vpath, len(words), hint)
		}
		s.info.Vocab = words
	}
	return s, nil
}

func fileExists(path string) bool {
	st, err := stream.StatFile(path)
	return err == nil && st.Mode().IsRegular()
}

// Info describes the file from its header: Rows is D, Terms is W, NNZ is the
// header's NNZ (entries with count 0 are counted there but not delivered).
func (s *Source) Info() stream.Info { return s.info }

// Docs makes one pass over the file: documents 1..D as rows 0..D-1, in batches
// of about Options.BatchRows documents.
func (s *Source) Docs(ctx context.Context) iter.Seq2[*stream.Docs, error] {
	return func(yield func(*stream.Docs, error) bool) {
		pl := newPassPools(s.opts.Workers)
		split := func(ctx context.Context, emit func(chunk) bool) error { return s.split(ctx, emit, pl) }
		parse := func(ctx context.Context, ch chunk) (*part, error) { return s.parse(ctx, ch, pl) }
		release := func(p *part) { s.release(p, pl) }
		if err := s.stamp.Check(); err != nil {
			yield(nil, err)
			return
		}
		m, err := s.mapPlain()
		if err != nil {
			yield(nil, err)
			return
		}
		if m != nil {
			defer m.unmap() // after Ordered has released every chunk
			split = m.split
		}
		st := &stitcher{s: s, ctx: ctx, yield: stream.NewSafeYield(yield), cur: s.firstBatch(&pl.docs), docs: &pl.docs}
		for p, err := range stream.Ordered(ctx, s.opts.Workers, split, parse, release) {
			if err != nil {
				st.cur.Release()
				yield(nil, stream.Locate(s.path, err))
				return
			}
			// Safe: on an error, add reads the chunk (mapped) for the line.
			err := stream.Safe(func() error { return st.add(p) })
			st.yield.Resume(err) // the consumer's loop body panicked
			err = stream.Locate(s.path, err)
			release(p)
			if err != nil {
				st.cur.Release()
				if !errors.Is(err, errStopped) {
					yield(nil, err)
				}
				return
			}
		}
		// The last batch waits for the check that the file did not change
		// while the pass read it.
		if err := s.stamp.Check(); err != nil {
			st.cur.Release()
			yield(nil, err)
			return
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
func (s *Source) release(p *part, pl *passPools) {
	if p.ch.m != nil {
		p.ch.m.drop(p.ch.data)
	}
	pl.bufs.Put(p.ch.buf)
	p.ch = chunk{}
	pl.parts.Put(p)
}

// errStopped says the consumer broke out of the loop.
var errStopped = errors.New("stopped by the consumer")

// checksumOf says what checks the bytes of the file at path (Info.Checksum).
func checksumOf(path string) string {
	f, err := stream.OpenFile(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 8)
	n, _ := f.ReadAt(head, 0)
	return stream.TextChecksum(head[:n])
}
