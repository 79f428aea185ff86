package text

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"iter"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/streamfit/streamfit/stream"
)

func init() {
	stream.Register(stream.Format{
		Name:      "text-lines",
		Match:     matchLines,
		OpenTexts: OpenLines,
	})
}

// matchLines claims .txt, .lines and .text files (optionally .gz or .zst) by
// name only: any file could be text, so text is the fallback, never a content
// match. UCI "docword.*.txt" files belong to the docword format.
func matchLines(path string, head []byte) int {
	if head == nil {
		if st, err := stream.StatFile(path); err == nil && st.IsDir() {
			return 0
		}
	}
	base := strings.ToLower(filepath.Base(path))
	if strings.Contains(base, "docword") {
		return 0
	}
	name, _ := stream.TrimCompression(base)
	switch filepath.Ext(name) {
	case ".txt", ".lines", ".text":
		return 1
	}
	return 0
}

// Lines is a TextSource over a file holding one document per line, plain, gzip
// or zstd compressed (told apart by their magic bytes). Lines end with "\n" or
// "\r\n", or with "\r" alone in a file that has no "\n" (classic Mac OS); a
// blank line is an empty document, so document i is always line i+1. A
// byte order mark at the start of the file is dropped. Invalid UTF-8 is
// replaced by U+FFFD, which no token holds. Lines may be up to MaxDocBytes
// long.
type Lines struct {
	path  string
	size  int64
	o     stream.Options
	stamp stream.Stamp // the file as opened: every pass checks it is still so
}

// OpenLines opens path as a text-lines source; each pass yields batches of at
// most o.BatchRows documents (fewer when they are long). An empty file is an
// error wrapping stream.ErrEmpty.
func OpenLines(path string, o stream.Options) (stream.TextSource, error) {
	st, err := stream.StatFile(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, stream.Errorf(path, 0, -1, "", stream.ErrFormat, "is a directory (use format text-dir)")
	}
	if st.Size() == 0 {
		return nil, stream.Errorf(path, 0, -1, "", stream.ErrEmpty, "file is empty")
	}
	stamp, err := stream.StampFile(path, nil)
	if err != nil {
		return nil, err
	}
	return &Lines{path: path, size: st.Size(), o: o.WithDefaults(), stamp: stamp}, nil
}

// Info describes the file; the number of documents is unknown before a pass.
func (l *Lines) Info() stream.Info {
	return stream.Info{Path: l.path, Format: "text-lines", Layout: "text", Rows: -1, NNZ: -1, Bytes: l.size}
}

// Texts reads the file once. Reading and decompression run on one goroutine
// ahead of the consumer; UTF-8 repair runs on o.Workers goroutines.
func (l *Lines) Texts(ctx context.Context) iter.Seq2[*stream.Texts, error] {
	repair := func(_ context.Context, b *stream.Texts) (*stream.Texts, error) {
		for i, s := range b.Text {
			b.Text[i] = valid(s)
		}
		return b, nil
	}
	return stream.Ordered(ctx, l.o.Workers, l.split, repair, nil)
}

func (l *Lines) split(ctx context.Context, emit func(*stream.Texts) bool) error {
	if err := l.stamp.Check(); err != nil {
		return err
	}
	r, err := openReader(l.path)
	if err != nil {
		return err
	}
	defer r.Close()
	br := lineEnds(r.Reader)
	var (
		line     int64 // lines read so far
		reported int64 // bytes already passed to Progress
		arena    []byte
		ends     []int
		capacity = 64 << 10 // the arena size to start a batch with
	)
	flush := func() bool {
		if len(ends) == 0 {
			return true
		}
		// The arena is never reused, so its strings can share its memory: one
		// allocation per batch instead of one per line.
		all := unsafe.String(unsafe.SliceData(arena), len(arena))
		b := &stream.Texts{Start: line - int64(len(ends)), Text: make([]string, len(ends))}
		lo := 0
		for i, hi := range ends {
			b.Text[i] = all[lo:hi]
			lo = hi
		}
		l.o.Progress.Add(int64(len(ends)), r.n.N-reported)
		reported = r.n.N
		// Size the next arena like this one, so a pass of similar batches
		// neither regrows nor over-allocates.
		capacity = min(len(arena)+len(arena)/8+4096, batchBytes+batchBytes/8)
		arena, ends = nil, nil
		return emit(b)
	}
	for {
		if line%1024 == 0 && ctx.Err() != nil {
			return nil // Ordered reports the cancellation
		}
		if arena == nil {
			arena = make([]byte, 0, capacity)
			ends = make([]int, 0, l.o.BatchRows)
		}
		var err error
		start := len(arena)
		arena, err = readLine(br, arena)
		if line == 0 && err == nil && bytes.HasPrefix(arena[start:], []byte(bom)) {
			arena = append(arena[:start], arena[start+len(bom):]...)
		}
		if err == nil && bytes.IndexByte(arena[start:], 0) >= 0 {
			// Text has no NUL bytes; binary data split at its newline bytes
			// would pass for lines of gibberish words.
			return stream.Errorf(l.path, line+1, line, "", stream.ErrFormat, "binary data (a NUL byte), not text")
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, errLong) {
				return stream.Errorf(l.path, line+1, line, "", stream.ErrValue, "line longer than %d MB", MaxDocBytes>>20)
			}
			if r.compressed && !errors.Is(err, io.ErrUnexpectedEOF) {
				return stream.DecompressError(l.path, r.n.N, err)
			}
			return stream.Errorf(l.path, line+1, -1, "", stream.ErrCorrupt, "%v", err)
		}
		line++
		ends = append(ends, len(arena))
		if len(ends) >= l.o.BatchRows || len(arena) >= batchBytes {
			if !flush() {
				return nil
			}
		}
	}
	if line == 0 {
		return stream.Errorf(l.path, 0, -1, "", stream.ErrEmpty, "no lines after decompression")
	}
	// The last batch waits for the check that the file did not change
	// while the pass read it.
	if err := l.stamp.Check(); err != nil {
		return err
	}
	flush()
	return nil
}

var errLong = errors.New("line too long")

// readLine appends the next line of r to dst without its "\n" or "\r\n" (a
// last line without a newline loses a final "\r" too). It returns io.EOF,
// with nothing appended, only at the end of the input, so a last line that
// is just "\r" still counts as an (empty) line.
func readLine(r *bufio.Reader, dst []byte) ([]byte, error) {
	start := len(dst)
	for {
		chunk, err := r.ReadSlice('\n')
		dst = append(dst, chunk...)
		if len(dst)-start > MaxDocBytes {
			return dst, errLong
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(dst) == start:
			return dst, io.EOF
		case err == io.EOF:
			err = nil // the last line, without a newline
		case err == nil:
			dst = dst[:len(dst)-1]
		case err == io.ErrUnexpectedEOF:
			return dst, errors.New("unexpected end of compressed data (truncated file?)")
		default:
			return dst, err
		}
		if len(dst) > start && dst[len(dst)-1] == '\r' {
			dst = dst[:len(dst)-1]
		}
		return dst, nil
	}
}
