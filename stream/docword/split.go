package docword

import (
	"bytes"
	"context"
	"io"
	"os"
	"sync"

	"github.com/streamfit/streamfit/stream"
)

// maxLine is the longest line a pass accepts; real entry lines are a few dozen
// bytes, so anything longer is a broken file, not data.
const maxLine = 1 << 20

var bufPool sync.Pool

// getBuf returns a pooled buffer of length n.
func getBuf(n int) *[]byte {
	if v := bufPool.Get(); v != nil {
		b := v.(*[]byte)
		if cap(*b) >= n {
			*b = (*b)[:n]
			return b
		}
	}
	b := make([]byte, n)
	return &b
}

func putBuf(b *[]byte) {
	if b != nil {
		bufPool.Put(b)
	}
}

// split reads the file sequentially (decompressing it here, on one goroutine),
// skips the header and emits chunks of whole lines. Each chunk's buffer is
// owned by the pipeline until the stitcher releases the parsed part.
func (s *Source) split(ctx context.Context, emit func(chunk) bool) error {
	f, err := os.Open(s.path)
	if err != nil {
		return err
	}
	defer f.Close()
	cr := &countingReader{r: f}
	dec, closeDec, err := decompressor(cr)
	if err != nil {
		return stream.Errorf(s.path, 1, -1, "", stream.ErrCorrupt, "cannot decompress: %v", err)
	}
	defer closeDec()
	prog := s.opts.Progress
	var reported int64
	line := int64(1)
	skip := headerLines
	bp := getBuf(s.chunk)
	n := 0 // bytes held in *bp
	for {
		if ctx.Err() != nil {
			putBuf(bp)
			return nil // the pipeline reports the cancellation
		}
		buf := *bp
		m, eof, rerr := fill(dec, buf[n:])
		n += m
		prog.Add(0, cr.n-reported)
		reported = cr.n
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
			putBuf(bp)
			at := line + int64(bytes.Count(data, []byte{'\n'}))
			return stream.Errorf(s.path, at, -1, "", stream.ErrCorrupt, "decompressing: %v", rerr)
		}
		if skip > 0 && eof {
			putBuf(bp)
			return stream.Errorf(s.path, line, -1, "", stream.ErrCorrupt, "the header is gone: the file changed since it was opened")
		}
		cut := len(data)
		if !eof {
			cut = bytes.LastIndexByte(data, '\n') + 1
		}
		if cut == 0 && !eof {
			// No complete line: keep reading into a bigger buffer.
			if len(data) > maxLine {
				putBuf(bp)
				return stream.Errorf(s.path, line, -1, "", stream.ErrValue, "line is longer than %d bytes", maxLine)
			}
			nb := getBuf(2 * len(buf))
			n = copy(*nb, data)
			putBuf(bp)
			bp = nb
			continue
		}
		rest := data[cut:]
		nb := getBuf(max(s.chunk, 2*len(rest)))
		kept := copy(*nb, rest)
		if cut > 0 {
			lines := int64(bytes.Count(data[:cut], []byte{'\n'}))
			if data[cut-1] != '\n' {
				lines++ // last line of the file, without a newline
			}
			if !emit(chunk{buf: bp, data: data[:cut], line: line}) {
				putBuf(bp)
				putBuf(nb)
				return nil
			}
			line += lines
		} else {
			putBuf(bp)
		}
		if eof {
			putBuf(nb)
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
