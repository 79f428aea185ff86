package statsfile

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// A payload may carry its arrays as sections: after the payload's own
// metadata, which lists them (SectionMeta), each array's float64 values
// little endian, in chunks of SectionChunk values, each chunk followed by
// its values' low words (uint64, little endian) when the array is an exact
// total. A reader can then add a section to exact totals chunk by chunk,
// without holding a second copy of the statistics.

// SectionChunk is the number of values of a section's chunk.
const SectionChunk = 8192

// Section is one array of a payload: float64 values and, for an exact
// total, their low words (Lo, as long as F64; nil otherwise).
type Section struct {
	Name string
	F64  []float64
	Lo   []uint64
}

// SectionMeta describes a section in a payload's metadata: its name, its
// number of values, and whether low words follow each chunk.
type SectionMeta struct {
	Name  string `json:"name"`
	Len   int    `json:"len"`
	Exact bool   `json:"exact,omitempty"`
}

// Meta describes s.
func (s Section) Meta() SectionMeta {
	return SectionMeta{Name: s.Name, Len: len(s.F64), Exact: s.Lo != nil}
}

// appendTo appends chunk [lo, hi) of s to buf.
func (s Section) appendTo(buf []byte, lo, hi int) []byte {
	for _, v := range s.F64[lo:hi] {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
	}
	if s.Lo != nil {
		for _, v := range s.Lo[lo:hi] {
			buf = binary.LittleEndian.AppendUint64(buf, v)
		}
	}
	return buf
}

// readChunk reads the len(v) values of a chunk of s (and their low words
// into lo when s has them) from r, through buf (16·SectionChunk bytes).
func (s Section) readChunk(r io.Reader, buf []byte, v []float64, lo []uint64) error {
	n := len(v)
	if s.Lo != nil {
		n *= 2
	}
	b := buf[:8*n]
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	if s.Lo != nil {
		for i := range lo {
			lo[i] = binary.LittleEndian.Uint64(b[8*(len(v)+i):])
		}
	}
	return nil
}

// WriteSections writes head (the payload's bytes before its sections) and
// then secs in order to w, in writes of at least flush bytes but the last:
// the writer of Write, which stops at the first write after its context
// ended, then checks the context that often.
func WriteSections(w io.Writer, head []byte, secs []Section, flush int) error {
	buf := head
	for _, sec := range secs {
		for off := 0; off < len(sec.F64); off += SectionChunk {
			if len(buf) >= flush {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
			buf = sec.appendTo(buf, off, min(off+SectionChunk, len(sec.F64)))
		}
	}
	_, err := w.Write(buf)
	return err
}

// ReadSections reads the sections of a payload from r, chunk by chunk: the
// sections metas lists (read from the payload's metadata), which must be
// laid out as secs (names, lengths, low words). For each chunk it calls fn
// with the index of the section, the offset of the chunk and its values and
// low words (scratch, valid during the call). It fails if the two lists
// differ or anything follows the last section.
func ReadSections(r io.Reader, secs []Section, metas []SectionMeta, fn func(i, off int, v []float64, lo []uint64) error) error {
	if len(secs) != len(metas) {
		return fmt.Errorf("statistics file is inconsistent: %d sections, expected %d", len(metas), len(secs))
	}
	buf := make([]byte, 16*SectionChunk)
	v, lo := make([]float64, SectionChunk), make([]uint64, SectionChunk)
	for i, sec := range secs {
		if m, want := metas[i], sec.Meta(); m != want {
			return fmt.Errorf("statistics file is inconsistent: section %s of %d values (exact %t), expected %s of %d (exact %t)",
				m.Name, m.Len, m.Exact, want.Name, want.Len, want.Exact)
		}
		for off := 0; off < len(sec.F64); off += SectionChunk {
			n := min(SectionChunk, len(sec.F64)-off)
			if err := sec.readChunk(r, buf, v[:n], lo[:n]); err != nil {
				return err
			}
			if err := fn(i, off, v[:n], lo[:n]); err != nil {
				return err
			}
		}
	}
	if n, _ := io.Copy(io.Discard, r); n != 0 {
		return fmt.Errorf("%d bytes after the last section", n)
	}
	return nil
}
