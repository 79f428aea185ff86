package docword

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/streamfit/streamfit/stream"
)

// chunk is a run of whole lines cut from the decompressed file.
type chunk struct {
	buf  *[]byte // pooled backing array, returned after stitching
	data []byte
	line int64    // 1-based line number of data's first line
	m    *mapping // set when data is a slice of the mapped file instead
}

// part is a parsed chunk: its lines grouped into runs of one document id, in
// file order, with the entries of run r at terms/counts[offs[r]:offs[r+1]].
type part struct {
	ch     chunk
	docs   []int64
	offs   []int
	terms  []int32
	counts []int32
	lines  int64    // entry lines parsed before err
	err    *lineErr // first problem in the chunk, nil if none
}

// lineErr is a problem on one line. Order problems need to know where the
// document appeared before, which only the stitcher can find out, so they
// carry the document ids instead of a finished message.
type lineErr struct {
	line      int64
	kind      error
	msg       string
	order     bool
	doc, prev int64
}

func (p *part) reset(ch chunk) {
	p.ch = ch
	p.docs, p.offs = p.docs[:0], p.offs[:0]
	p.terms, p.counts = p.terms[:0], p.counts[:0]
	p.lines, p.err = 0, nil
	if cap(p.terms) == 0 {
		// A new part: room for every line of the chunk (and an eighth more
		// for later chunks) at once, since growing by appends would leave
		// twice that in garbage while the pass warms up.
		n := bytes.Count(ch.data, []byte{'\n'}) + 1
		n += n / 8
		p.terms, p.counts = make([]int32, 0, n), make([]int32, 0, n)
	}
}

// stampMax bounds the per-worker table used to spot repeated terms; terms
// beyond it (only in huge vocabularies) go through a map.
const stampMax = 1 << 22

// scratch finds repeated terms within one document: stamp[t] == gen marks term
// t as seen in the current run, so moving to the next run costs one increment.
type scratch struct {
	stamp []uint32
	gen   uint32
	big   map[int32]struct{}
}

var scratchPool = sync.Pool{New: func() any { return &scratch{gen: 1} }}

func (s *scratch) nextRun() {
	s.gen++
	if s.gen == 0 {
		clear(s.stamp)
		s.gen = 1
	}
	if len(s.big) > 0 {
		clear(s.big)
	}
}

// seen marks t and reports whether it was already marked in this run. limit
// is min(W, stampMax) for the file being read.
func (s *scratch) seen(t int32, limit int) bool {
	if int(t) < len(s.stamp) {
		if s.stamp[t] == s.gen {
			return true
		}
		s.stamp[t] = s.gen
		return false
	}
	if int(t) < limit {
		n := min(max(2*len(s.stamp), int(t)+1, 1024), limit)
		s.stamp = append(s.stamp, make([]uint32, n-len(s.stamp))...)
		s.stamp[t] = s.gen
		return false
	}
	if s.big == nil {
		s.big = map[int32]struct{}{}
	}
	if _, ok := s.big[t]; ok {
		return true
	}
	s.big[t] = struct{}{}
	return false
}

// parse decodes one chunk. It never fails as a whole: the first bad line ends
// the chunk and is recorded in part.err, so that the stitcher reports problems
// in file order after the lines before them.
func (s *Source) parse(ctx context.Context, ch chunk, pl *passPools) (*part, error) {
	p := pl.parts.Get()
	p.reset(ch)

	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	D, W := s.h.D, s.h.W
	limit := int(min(W, stampMax))
	data := ch.data
	line := ch.line - 1
	cur := int64(-1)
	stamp, gen := sc.stamp, sc.gen
	// The previous line's "docID " bytes (up to 8, little-endian in prefix):
	// consecutive lines mostly share the document, and comparing a word is
	// cheaper than parsing its digits again.
	var prefix, prefixMask uint64
	var prefixLen int
	var prefixDoc int64
	for i := 0; i < len(data); {
		line++
		// Fast path: "d w c\n" with single spaces, the form writers produce.
		var d int64
		var j int
		if prefixLen > 0 && i+8 <= len(data) && binary.LittleEndian.Uint64(data[i:])&prefixMask == prefix {
			d, j = prefixDoc, i+prefixLen-1
		} else {
			d, j = digits(data, i)
			if n := j - i; n > 0 && n < 8 && i+8 <= len(data) && data[j] == ' ' {
				prefixLen = n + 1
				prefixMask = uint64(1)<<(8*prefixLen) - 1
				prefix = binary.LittleEndian.Uint64(data[i:]) & prefixMask
				prefixDoc = d
			}
		}
		k := j + 1
		w, j2 := digits(data, k)
		k2 := j2 + 1
		c, j3 := digits(data, k2)
		next := j3 + 1
		if j == i || j-i > 18 || j >= len(data) || data[j] != ' ' ||
			j2 == k || j2-k > 18 || j2 >= len(data) || data[j2] != ' ' ||
			j3 == k2 || j3-k2 > 18 || j3 >= len(data) || data[j3] != '\n' {
			// Anything else (blanks, \r, no final newline, bad fields).
			ln := data[i:]
			next = len(data)
			if nl := bytes.IndexByte(ln, '\n'); nl >= 0 {
				ln, next = ln[:nl], i+nl+1
			}
			var ok bool
			if d, w, c, ok = parseEntry(ln, s.h.market); !ok && s.h.market {
				d, w, c, ok = parseRealEntry(ln)
			}
			if !ok {
				p.err = diagnose(ln, line, s.h.market)
				break
			}
		}
		i = next
		if d == 0 || d > D {
			p.err = &lineErr{line: line, kind: stream.ErrValue, msg: fmt.Sprintf("document id %d is outside 1..%d given by the header (line %d)", d, D, s.h.fieldLine(0))}
			break
		}
		if w == 0 || w > W {
			p.err = &lineErr{line: line, kind: stream.ErrValue, msg: fmt.Sprintf("word id %d is outside the vocabulary 1..%d given by the header (line %d)", w, W, s.h.fieldLine(1))}
			break
		}
		if c > math.MaxInt32 {
			p.err = &lineErr{line: line, kind: stream.ErrValue, msg: fmt.Sprintf("count %d is larger than %d", c, math.MaxInt32)}
			break
		}
		if d != cur {
			if d < cur {
				p.err = &lineErr{line: line, kind: stream.ErrOrder, order: true, doc: d, prev: cur}
				break
			}
			p.docs = append(p.docs, d)
			p.offs = append(p.offs, len(p.terms))
			cur = d
			sc.gen = gen
			sc.nextRun()
			gen = sc.gen
		}
		p.lines++
		if c == 0 {
			continue // an empty entry says nothing; the document still exists
		}
		t := int32(w - 1)
		var dup bool
		if int(t) < len(stamp) {
			dup = stamp[t] == gen
			stamp[t] = gen
		} else {
			dup = sc.seen(t, limit)
			stamp = sc.stamp
		}
		if dup {
			p.lines--
			p.err = &lineErr{line: line, kind: stream.ErrValue, msg: fmt.Sprintf("word %d appears twice in document %d", w, d)}
			break
		}
		p.terms = append(p.terms, t)
		p.counts = append(p.counts, int32(c))
	}
	sc.gen = gen
	p.offs = append(p.offs, len(p.terms))
	return p, nil
}

// digits parses the decimal digits at data[i:], returning their value and the
// index of the first non-digit. Callers bound the number of digits (at most 18
// cannot overflow).
func digits(data []byte, i int) (int64, int) {
	var v int64
	for ; i < len(data); i++ {
		x := data[i] - '0'
		if x > 9 {
			break
		}
		v = v*10 + int64(x)
	}
	return v, i
}

// parseEntry parses "docID wordID count" with blanks between and around the
// fields (a trailing \r included). It is the hot loop of a pass; anything
// unusual fails here and is explained by diagnose.
// With real, the count may have a fraction of zeros ("2.0"), as Matrix
// Market files of real entries write whole counts.
func parseEntry(b []byte, real bool) (d, w, c int64, ok bool) {
	i := skipBlanks(b, 0)
	if d, i, ok = parseUint(b, i); !ok || i >= len(b) || !isBlank(b[i]) {
		return 0, 0, 0, false
	}
	i = skipBlanks(b, i+1)
	if w, i, ok = parseUint(b, i); !ok || i >= len(b) || !isBlank(b[i]) {
		return 0, 0, 0, false
	}
	i = skipBlanks(b, i+1)
	if c, i, ok = parseUint(b, i); !ok {
		return 0, 0, 0, false
	}
	if real && i < len(b) && b[i] == '.' {
		for i++; i < len(b) && b[i] == '0'; i++ {
		}
	}
	return d, w, c, skipBlanks(b, i) == len(b)
}

// parseRealEntry is parseEntry for a Matrix Market line whose count is a
// real number written any way strconv reads one ("2e+00", "2.", "+2"):
// whole counts in a real matrix are counts. The fast parseEntry reads the
// usual forms; this one takes the rest.
func parseRealEntry(b []byte) (d, w, c int64, ok bool) {
	f := bytes.Fields(b)
	if len(f) != 3 {
		return 0, 0, 0, false
	}
	d, j, ok1 := parseUint(f[0], 0)
	w, k, ok2 := parseUint(f[1], 0)
	x, err := strconv.ParseFloat(string(f[2]), 64)
	if !ok1 || !ok2 || j != len(f[0]) || k != len(f[1]) || err != nil || x != math.Trunc(x) || x < 0 || x > math.MaxInt32 {
		return 0, 0, 0, false
	}
	return d, w, int64(x), true
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

func skipBlanks(b []byte, i int) int {
	for i < len(b) && isBlank(b[i]) {
		i++
	}
	return i
}

// parseUint parses the decimal digits at b[i:], returning the value and the
// index after them; ok is false when there are no digits or the value does
// not fit in an int64.
func parseUint(b []byte, i int) (v int64, j int, ok bool) {
	j = i
	for j < len(b) {
		c := b[j] - '0'
		if c > 9 {
			break
		}
		v = v*10 + int64(c)
		j++
	}
	switch n := j - i; {
	case n == 0:
		return 0, j, false
	case n > 18: // may have overflowed: redo it carefully
		v = 0
		for _, c := range b[i:j] {
			if v > (math.MaxInt64-int64(c-'0'))/10 {
				return 0, j, false
			}
			v = v*10 + int64(c-'0')
		}
	}
	return v, j, true
}

// diagnose explains why parseEntry rejected a line.
func diagnose(ln []byte, line int64, real bool) *lineErr {
	bad := func(format string, args ...any) *lineErr {
		return &lineErr{line: line, kind: stream.ErrValue, msg: fmt.Sprintf(format, args...)}
	}
	f := strings.Fields(string(ln))
	if len(f) != 3 {
		return bad("expected 3 fields \"docID wordID count\", found %d in %q", len(f), trimLine(ln))
	}
	for k, name := range []string{"document id", "word id", "count"} {
		v := f[k]
		if _, j, ok := parseUint([]byte(v), 0); ok && j == len(v) {
			continue
		}
		if x, err := strconv.ParseFloat(v, 64); err == nil || isRange(err) {
			switch {
			case math.IsNaN(x):
				return bad("%s is NaN", name)
			case x < 0:
				return bad("%s %s is negative", name, v)
			case isRange(err) || math.IsInf(x, 0):
				return bad("%s %s is out of range", name, v)
			case x > math.MaxInt64:
				return bad("%s %s overflows a 64-bit integer", name, v)
			}
			if x == math.Trunc(x) && !real {
				return bad("%s %s is a number but not written as an integer: use digits only (%s)", name, v, strconv.FormatFloat(x, 'f', -1, 64))
			}
			return bad("%s %s is not an integer", name, v)
		}
		if strings.HasPrefix(v, "-") {
			return bad("%s %q is negative", name, v)
		}
		return bad("%s %q is not a non-negative integer", name, trimLine([]byte(v)))
	}
	return bad("malformed line %q", trimLine(ln))
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
