package docword

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/streamfit/streamfit/stream"
)

// maxLine is the longest line a pass accepts; real entry lines are a few dozen
// bytes, so anything longer is a broken file, not data.
const maxLine = 1 << 20

// passPools recycles the memory of one pass: chunk buffers, parsed parts and
// document batches, each a stream.Recycler kept until the pass ends, so a
// pass reuses a fixed set of buffers and its peak RSS does not drift up with
// the length of the file. The set is fixed from the start: the recyclers
// begin with as many (empty) buffers and parts as a pass can have out at
// once (chunkSlots). Taking the newest released instead kept a pass to the
// few its busiest moment so far had needed, more of them the longer it ran
// (a 4M-document .gz pass held 3–4 MB more than a 1M one).
type passPools struct {
	bufs  stream.Recycler[[]byte]
	parts stream.Recycler[part]
	docs  stream.FreeList
}

// chunkSlots is the most chunks a pass with workers parsers has out at once:
// 2×workers queued in stream.Ordered, one being emitted, the splitter's next
// buffer and the part being stitched; parts are two fewer (the splitter's
// two buffers are not parsed yet).
func chunkSlots(workers int) int { return 2*max(workers, 1) + 3 }

func newPassPools(workers int) *passPools {
	pl := &passPools{}
	pl.bufs.Prefill(chunkSlots(workers))
	pl.parts.Prefill(chunkSlots(workers) - 2)
	return pl
}

// getBuf returns a buffer of length n: the oldest released, grown if it is
// too small.
func (pl *passPools) getBuf(n int) *[]byte {
	b := pl.bufs.Get()
	if cap(*b) < n {
		*b = make([]byte, n)
	}
	*b = (*b)[:n]
	return b
}

// split reads the file sequentially (decompressing it here, on one goroutine),
// skips the header and emits chunks of whole lines. Each chunk's buffer is
// owned by the pipeline until the stitcher releases the parsed part.
func (s *Source) split(ctx context.Context, emit func(chunk) bool, pl *passPools) error {
	f, err := stream.OpenFile(s.path)
	if err != nil {
		return err
	}
	defer f.Close()
	cr := &stream.CountingReader{R: f}
	dec, closeDec, err := decompressor(cr)
	if err != nil {
		return stream.Errorf(s.path, 1, -1, "", stream.ErrCorrupt, "cannot decompress: %v", err)
	}
	defer closeDec()
	prog := s.opts.Progress
	var reported int64
	line := int64(1)
	skip := s.h.lines
	bp := pl.getBuf(s.chunk)
	n := 0 // bytes held in *bp
	for {
		if ctx.Err() != nil {
			pl.bufs.Put(bp)
			return nil // the pipeline reports the cancellation
		}
		buf := *bp
		m, eof, rerr := fill(dec, buf[n:])
		n += m
		prog.Add(0, cr.N-reported)
		reported = cr.N
		data := buf[:n]
		for skip > 0 {
			nl := bytes.IndexByte(data, '\n')
			if nl < 0 {
				break
			}
			data = data[nl+1:]
			skip--
			line++
		}
		if rerr != nil {
			pl.bufs.Put(bp)
			if !errors.Is(rerr, io.ErrUnexpectedEOF) {
				return stream.DecompressError(s.path, cr.N, rerr)
			}
			// Truncated: the lines before the end are sound.
			at := line + int64(bytes.Count(data, []byte{'\n'}))
			return stream.Errorf(s.path, at, -1, "", stream.ErrCorrupt, "decompressing: %v", rerr)
		}
		if skip > 0 && eof {
			pl.bufs.Put(bp)
			return stream.Errorf(s.path, line, -1, "", stream.ErrCorrupt, "the header is gone: the file changed since it was opened")
		}
		cut := len(data)
		if !eof {
			cut = bytes.LastIndexByte(data, '\n') + 1
		}
		if cut == 0 && !eof {
			// No complete line: keep reading into a bigger buffer.
			if len(data) > maxLine {
				pl.bufs.Put(bp)
				return stream.Errorf(s.path, line, -1, "", stream.ErrValue, "line is longer than %d bytes", maxLine)
			}
			nb := pl.getBuf(2 * len(buf))
			n = copy(*nb, data)
			pl.bufs.Put(bp)
			bp = nb
			continue
		}
		rest := data[cut:]
		nb := pl.getBuf(max(s.chunk, 2*len(rest)))
		kept := copy(*nb, rest)
		if cut > 0 {
			lines := int64(bytes.Count(data[:cut], []byte{'\n'}))
			if data[cut-1] != '\n' {
				lines++ // last line of the file, without a newline
			}
			if !emit(chunk{buf: bp, data: data[:cut], line: line}) {
				pl.bufs.Put(bp)
				pl.bufs.Put(nb)
				return nil
			}
			line += lines
		} else {
			pl.bufs.Put(bp)
		}
		if eof {
			pl.bufs.Put(nb)
			return nil
		}
		bp, n = nb, kept
	}
}

// fill reads until b is full or the input ends. Unlike io.ReadFull it tells a
// clean end (eof) from a decompressor's own io.ErrUnexpectedEOF, which means
// a truncated stream.
func fill(r io.Reader, b []byte) (n int, eof bool, err error) {
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err == io.EOF {
			return n, true, nil
		}
		if err != nil {
			return n, false, err
		}
	}
	return n, false, nil
}
