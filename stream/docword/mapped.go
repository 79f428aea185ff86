package docword

import (
	"bytes"
	"context"
	"unsafe"

	"github.com/streamfit/streamfit/internal/mmap"
	"github.com/streamfit/streamfit/stream"
)

// mapping is an uncompressed docword file mapped into memory for one pass:
// chunks are slices of it, so the file is parsed straight from the page
// cache without a read copy (profiled: read syscalls were 10–45% of a pass,
// more on a busy machine). Pages are dropped from the process's resident set
// as chunks are released, so a pass's RSS does not grow with the file.
type mapping struct {
	s    *Source
	data []byte
}

// mapPlain maps the file when it is not compressed; nil (and no error) means
// the pass reads it as a stream (compressed input, or no mmap on this
// platform).
func (s *Source) mapPlain() (*mapping, error) {
	f, err := stream.OpenFile(s.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	head := make([]byte, 4)
	n, _ := f.ReadAt(head, 0)
	if st.Size() == 0 || stream.Compression(head[:n]) != "" || st.Size() != int64(int(st.Size())) {
		return nil, nil
	}
	data, err := mmap.Map(f, int(st.Size()))
	if err != nil {
		return nil, nil
	}
	return &mapping{s: s, data: data}, nil
}

// unmap ends the mapping; no chunk may be in use.
func (m *mapping) unmap() { mmap.Unmap(m.data) }

// split emits chunks of about s.chunk bytes of whole lines after the header.
func (m *mapping) split(ctx context.Context, emit func(chunk) bool) error {
	s, data := m.s, m.data
	line := int64(1)
	for skip := s.h.lines; skip > 0; skip-- {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return stream.Errorf(s.path, line, -1, "", stream.ErrCorrupt, "the header is gone: the file changed since it was opened")
		}
		data = data[nl+1:]
		line++
	}
	s.opts.Progress.Add(0, int64(len(m.data)-len(data)))
	for len(data) > 0 {
		if ctx.Err() != nil {
			return nil // the pipeline reports the cancellation
		}
		cut := len(data)
		if cut > s.chunk {
			nl := bytes.LastIndexByte(data[:s.chunk], '\n')
			if nl < 0 {
				// No line ends within a chunk: find the end of this one.
				nl = bytes.IndexByte(data[s.chunk:], '\n')
				if nl < 0 {
					nl = len(data) - 1 - s.chunk
				}
				nl += s.chunk
				if nl+1 > maxLine {
					return stream.Errorf(s.path, line, -1, "", stream.ErrValue, "line is longer than %d bytes", maxLine)
				}
			}
			cut = nl + 1
		}
		ch := data[:cut]
		lines := int64(bytes.Count(ch, []byte{'\n'}))
		if ch[len(ch)-1] != '\n' {
			lines++ // last line of the file, without a newline
		}
		s.opts.Progress.Add(0, int64(cut))
		if !emit(chunk{data: ch, line: line, m: m}) {
			return nil
		}
		line += lines
		data = data[cut:]
	}
	return nil
}

// drop takes a released chunk's pages out of the resident set. A page it
// shares with the next chunk may still be read there; it then faults back in
// from the page cache, unchanged.
func (m *mapping) drop(ch []byte) {
	if len(ch) == 0 {
		return
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m.data)))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(ch))) - base
	hi := lo + uintptr(len(ch))
	page := uintptr(mmap.PageSize)
	lo, hi = lo/page*page, hi/page*page
	if lo < hi {
		mmap.Drop(m.data[lo:hi])
	}
}
