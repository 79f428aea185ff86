package docword

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/streamfit/streamfit/stream"
)

// Writer writes documents as a docword file. The header needs D and NNZ, known
// only at the end, so entries go to a temporary body file first; Close writes
// header and body (compressed when the name ends in .gz or .zst) to a
// temporary name and renames it into place. Documents are numbered in the
// order written, so the i-th document written gets id i.
type Writer struct {
	path    string
	o       stream.WriteOptions
	body    *os.File
	bw      *bufio.Writer
	docs    int64
	nnz     int64
	maxTerm int32
	done    bool
}

// Create starts a docword file at path. o.Terms fixes W (else the vocabulary
// length, else the largest term id + 1); with o.Vocab, the vocabulary is
// written beside it, at VocabPath(path).
func Create(path string, o stream.WriteOptions) (*Writer, error) {
	body, err := stream.TempBeside(path, "body")
	if err != nil {
		return nil, err
	}
	return &Writer{path: path, o: o, body: body, bw: bufio.NewWriterSize(stream.ProgressWriter{W: body, P: o.Progress}, 1<<20), maxTerm: -1}, nil
}

// VocabPath is where the vocabulary of a docword file goes: the UCI naming
// docword.X.txt → vocab.X.txt in the same directory, else the file's name
// (without a compression suffix) plus ".vocab".
func VocabPath(path string) string {
	base, _ := stream.TrimCompression(path)
	dir, name := filepath.Split(base)
	if rest, ok := strings.CutPrefix(name, "docword."); ok && rest != "" {
		return dir + "vocab." + rest // not Join, whose cleaning breaks gs://
	}
	return base + ".vocab"
}

// Write appends the documents of b. Entries with count 0 are left out (a
// reader drops them anyway); negative counts and term ids are errors.
func (w *Writer) Write(b *stream.Docs) error {
	if w.done {
		return errors.New("docword: Write after Close or Abort")
	}
	for i := range b.Len() {
		w.docs++
		terms, counts := b.Doc(i)
		for j, t := range terms {
			c := counts[j]
			if c == 0 {
				continue
			}
			if c < 0 || t < 0 {
				return fmt.Errorf("%s: document %d: term %d with count %d", w.path, w.docs-1, t, c)
			}
			w.maxTerm = max(w.maxTerm, t)
			if w.bw.Available() < 64 {
				if err := w.bw.Flush(); err != nil {
					return err
				}
			}
			buf := w.bw.AvailableBuffer()
			buf = appendUint(buf, uint64(w.docs))
			buf = append(buf, ' ')
			buf = appendUint(buf, uint64(t)+1)
			buf = append(buf, ' ')
			buf = appendUint(buf, uint64(c))
			buf = append(buf, '\n')
			w.bw.Write(buf) // fits: writes into the buffer's free space
			w.nnz++
		}
	}
	return nil
}

// appendUint formats v in decimal.
func appendUint(b []byte, v uint64) []byte {
	var tmp [20]byte
	i := len(tmp)
	for v >= 10 {
		q := v / 10
		i--
		tmp[i] = byte('0' + v - 10*q)
		v = q
	}
	i--
	tmp[i] = byte('0' + v)
	return append(b, tmp[i:]...)
}

// Close writes the file (and the vocabulary) and renames them into place.
// On error nothing is left behind.
func (w *Writer) Close() error { return w.CloseContext(context.Background()) }

// CloseContext is Close, stopped (leaving nothing behind) when ctx ends
// during the final copy of the body through the compressor, which takes
// about as long as the whole write on a large compressed file.
func (w *Writer) CloseContext(ctx context.Context) error {
	if w.done {
		return errors.New("docword: Close after Close or Abort")
	}
	w.done = true
	defer w.dropBody()
	if err := w.bw.Flush(); err != nil {
		return err
	}
	terms := int64(w.o.Terms)
	if terms <= 0 && w.o.Vocab != nil {
		terms = int64(len(w.o.Vocab))
	}
	if terms <= 0 {
		terms = int64(w.maxTerm) + 1
	}
	if int64(w.maxTerm) >= terms {
		return fmt.Errorf("%s: term id %d is outside the vocabulary of %d terms", w.path, w.maxTerm, terms)
	}
	if w.o.Vocab != nil && int64(len(w.o.Vocab)) != terms {
		return fmt.Errorf("%s: %d words in the vocabulary for %d terms", w.path, len(w.o.Vocab), terms)
	}
	af, err := stream.CreateAtomic(w.path)
	if err != nil {
		return err
	}
	if err := w.writeAll(ctx, af, terms); err != nil {
		af.Abort()
		return fmt.Errorf("writing %s: %w", w.path, err)
	}
	var vf *stream.AtomicFile
	if w.o.Vocab != nil {
		if vf, err = w.writeVocab(); err != nil {
			af.Abort()
			return err
		}
	}
	if err := af.Commit(); err != nil {
		if vf != nil {
			vf.Abort()
		}
		return err
	}
	if vf != nil {
		return vf.Commit()
	}
	return nil
}

// writeAll writes the header and the body through the compressor the name
// asks for.
func (w *Writer) writeAll(ctx context.Context, f io.Writer, terms int64) error {
	_, comp := stream.TrimCompression(w.path)
	var out io.Writer = f
	var closeOut func() error
	switch comp {
	case "gzip":
		z := gzip.NewWriter(f)
		out, closeOut = z, z.Close
	case "zstd":
		z, err := zstd.NewWriter(f)
		if err != nil {
			return err
		}
		out, closeOut = z, z.Close
	}
	var head []byte
	for _, v := range []int64{w.docs, terms, w.nnz} {
		head = appendUint(head, uint64(v))
		head = append(head, '\n')
	}
	_, err := out.Write(head)
	if err == nil {
		_, err = w.body.Seek(0, io.SeekStart)
	}
	buf := make([]byte, 1<<20)
	for err == nil {
		if err = ctx.Err(); err != nil {
			break
		}
		var n int
		n, err = io.ReadFull(w.body, buf)
		if n > 0 {
			if _, werr := out.Write(buf[:n]); werr != nil {
				err = werr
			} else if err == io.ErrUnexpectedEOF || err == io.EOF {
				err = io.EOF
			}
		}
	}
	if err == io.EOF {
		err = nil
	}
	if closeOut != nil {
		if cerr := closeOut(); err == nil {
			err = cerr
		}
	}
	return err
}

func (w *Writer) writeVocab() (*stream.AtomicFile, error) {
	path := VocabPath(w.path)
	vf, err := stream.CreateAtomic(path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriter(vf)
	for _, word := range w.o.Vocab {
		bw.WriteString(word)
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		vf.Abort()
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return vf, nil
}

// Abort drops everything written; nothing appears at the path.
func (w *Writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.dropBody()
	return nil
}

func (w *Writer) dropBody() {
	w.body.Close()
	os.Remove(w.body.Name())
}
