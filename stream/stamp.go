package stream

import (
	"fmt"
	"hash/crc32"
	"io"
	"time"
)

// Stamp identifies the state of an input file when a source opened it: its
// size, modification time and, for formats whose passes trust a footer
// read once (Parquet, Arrow IPC files), a checksum of the footer's bytes. A
// source checks it at the start and the end of every pass, so that a file
// replaced, rewritten in place or truncated between or during passes is
// an error naming it (ErrChanged) instead of a model of two different
// inputs. The zero Stamp checks nothing (an input that is not a regular
// file, such as a pipe).
type Stamp struct {
	Path    string
	Size    int64
	ModTime time.Time
	// Tail is the number of bytes at the end of the file that TailCRC sums.
	Tail    int64
	TailCRC uint32
}

// StampFile stamps the file at path; tail, when it returns more than 0,
// is how many bytes at the end of the file (its footer) the stamp also
// checksums, given the open file and its size.
func StampFile(path string, tail func(f File, size int64) (int64, error)) (Stamp, error) {
	f, err := OpenFile(path)
	if err != nil {
		return Stamp{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return Stamp{}, err
	}
	s := Stamp{Path: path, Size: st.Size(), ModTime: st.ModTime()}
	if tail == nil {
		return s, nil
	}
	n, err := tail(f, s.Size)
	if err != nil || n <= 0 {
		return s, nil // the format's reader reports a footer it cannot read
	}
	n = min(n, s.Size)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, s.Size-n); err != nil && err != io.EOF {
		return s, nil
	}
	s.Tail, s.TailCRC = n, crc32.ChecksumIEEE(buf)
	return s, nil
}

// Check reports, as an ErrChanged error naming the file, how the file
// differs from its stamp: gone, another size, another modification time,
// another footer.
func (s Stamp) Check() error {
	if s.Path == "" {
		return nil
	}
	f, err := OpenFile(s.Path)
	if err != nil {
		return Errorf(s.Path, 0, -1, "", ErrChanged, "the file is gone since the first pass began (%v)", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	var what string
	switch {
	case st.Size() != s.Size:
		what = fmt.Sprintf("its size went from %d to %d bytes", s.Size, st.Size())
	case !st.ModTime().Equal(s.ModTime):
		what = fmt.Sprintf("it was modified at %s", st.ModTime().Format("2006-01-02 15:04:05.000000000"))
	case s.Tail > 0:
		buf := make([]byte, s.Tail)
		if _, err := f.ReadAt(buf, s.Size-s.Tail); err != nil && err != io.EOF {
			return err
		}
		if crc32.ChecksumIEEE(buf) != s.TailCRC {
			what = "its footer changed"
		}
	}
	if what == "" {
		return nil
	}
	return Errorf(s.Path, 0, -1, "", ErrChanged, "the input was rewritten while streamfit read it: %s since it was opened; run again on a file that stays as it is", what)
}
