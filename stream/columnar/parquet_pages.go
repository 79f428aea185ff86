package columnar

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// pageLeaf reads the levels and values of an INT32 list leaf from its pages
// (decompressed by arrow-go's page reader) without arrow-go's value decoders.
// Those allocate on every page: a 4 kB index buffer per dictionary decode
// call, the dictionary again per page, new RLE readers; a pass over a 1M
// document corpus left ~6 MB of garbage per million documents, enough to
// make the heap of a long pass climb to the collector's goal while a short
// one ends below it. Here the dictionary, decoders and page buffers are
// reused; what a warm pass still allocates is arrow-go's page headers, about
// 1 MB per million documents.
type pageLeaf struct {
	pr             file.PageReader
	maxDef, maxRep int16
	dict           []int32
	hasDict        bool
	// The current data page: levels and values not yet read.
	left     int
	rep, def hybrid
	idx      hybrid // dictionary indexes, when dictEnc
	plain    []byte // PLAIN values otherwise
	dictEnc  bool
}

// pageLeafOK reports whether the column chunk can be read by pageLeaf: INT32
// values, PLAIN or dictionary encoded, RLE levels.
func pageLeafOK(cc *metadata.ColumnChunkMetaData, lp leafPlan) bool {
	if cc.Type() != parquet.Types.Int32 || lp.unsigned {
		return false
	}
	for _, e := range cc.Encodings() {
		switch e {
		case parquet.Encodings.Plain, parquet.Encodings.PlainDict, parquet.Encodings.RLEDict, parquet.Encodings.RLE:
		default:
			return false
		}
	}
	return true
}

func (p *pageLeaf) reset(pr file.PageReader, lp leafPlan) {
	*p = pageLeaf{pr: pr, maxDef: lp.maxDef, maxRep: 1, dict: p.dict[:0]}
}

var errPage = errors.New("malformed page")

// nextPage moves to the next data page, reading a dictionary page on the
// way; it returns false at the end of the chunk.
func (p *pageLeaf) nextPage() (bool, error) {
	for {
		if !p.pr.Next() {
			return false, p.pr.Err()
		}
		pg := p.pr.Page()
		data := pg.Data()
		switch pg := pg.(type) {
		case *file.DictionaryPage:
			n := int(pg.NumValues())
			if len(data) < 4*n {
				return false, fmt.Errorf("dictionary page: %d values in %d bytes: %w", n, len(data), errPage)
			}
			p.dict = p.dict[:0]
			for i := range n {
				p.dict = append(p.dict, int32(binary.LittleEndian.Uint32(data[4*i:])))
			}
			p.hasDict = true
			continue
		case *file.DataPageV1:
			n := int(pg.NumValues())
			if n == 0 {
				continue
			}
			var err error
			if data, err = p.rep.initPrefixed(data, p.maxRep); err != nil {
				return false, err
			}
			if data, err = p.def.initPrefixed(data, p.maxDef); err != nil {
				return false, err
			}
			return true, p.values(n, parquet.Encoding(pg.Encoding()), data)
		case *file.DataPageV2:
			n := int(pg.NumValues())
			if n == 0 {
				continue
			}
			rl, dl := int(pg.RepetitionLevelByteLen()), int(pg.DefinitionLevelByteLen())
			if rl < 0 || dl < 0 || rl+dl > len(data) {
				return false, fmt.Errorf("level lengths %d+%d beyond the page's %d bytes: %w", rl, dl, len(data), errPage)
			}
			p.rep.init(data[:rl], p.maxRep)
			p.def.init(data[rl:rl+dl], p.maxDef)
			return true, p.values(n, parquet.Encoding(pg.Encoding()), data[rl+dl:])
		default:
			continue
		}
	}
}

// values sets up the value decoder of a data page of n levels.
func (p *pageLeaf) values(n int, enc parquet.Encoding, data []byte) error {
	p.left = n
	switch enc {
	case parquet.Encodings.Plain:
		p.dictEnc, p.plain = false, data
	case parquet.Encodings.PlainDict, parquet.Encodings.RLEDict:
		if !p.hasDict {
			return fmt.Errorf("dictionary-encoded page without a dictionary: %w", errPage)
		}
		if len(data) < 1 || data[0] > 32 {
			return fmt.Errorf("dictionary index width: %w", errPage)
		}
		p.dictEnc = true
		p.idx.initWidth(data[1:], uint(data[0]))
	default:
		return fmt.Errorf("unsupported encoding %s", enc)
	}
	return nil
}

// ReadBatch reads up to n levels into def and rep and the values of the
// fully defined ones into vals, like file.Int32ColumnChunkReader.ReadBatch.
func (p *pageLeaf) ReadBatch(n int, vals []int32, def, rep []int16) (total int64, nv int, err error) {
	got := 0
	for got < n {
		if p.left == 0 {
			ok, err := p.nextPage()
			if err != nil || !ok {
				return int64(got), nv, err
			}
		}
		k := min(n-got, p.left)
		if err := readHybrid(&p.rep, rep[got:got+k]); err != nil {
			return int64(got), nv, err
		}
		if err := readHybrid(&p.def, def[got:got+k]); err != nil {
			return int64(got), nv, err
		}
		m := 0
		for _, d := range def[got : got+k] {
			if d == p.maxDef {
				m++
			}
		}
		out := vals[nv : nv+m]
		if p.dictEnc {
			if err := readHybrid(&p.idx, out); err != nil {
				return int64(got), nv, err
			}
			for j, x := range out {
				if uint32(x) >= uint32(len(p.dict)) {
					return int64(got), nv, fmt.Errorf("dictionary index %d out of range [0,%d): %w", x, len(p.dict), errPage)
				}
				out[j] = p.dict[x]
			}
		} else {
			if len(p.plain) < 4*m {
				return int64(got), nv, fmt.Errorf("page holds fewer values than its levels: %w", errPage)
			}
			for j := range out {
				out[j] = int32(binary.LittleEndian.Uint32(p.plain[4*j:]))
			}
			p.plain = p.plain[4*m:]
		}
		nv += m
		got += k
		p.left -= k
	}
	return int64(got), nv, nil
}

// hybrid decodes Parquet's RLE/bit-packed hybrid encoding.
type hybrid struct {
	data []byte
	bw   uint
	// rle values equal to val remain, or packed values from bit pos of data.
	rle, packed int
	val         uint32
	pos         uint64
	// zero: a level that is not stored (max level 0) reads as 0 throughout.
	zero bool
}

// initPrefixed sets h to the levels of a V1 page with maximum max, stored
// behind a 4-byte length, and returns what follows them.
func (h *hybrid) initPrefixed(data []byte, max int16) ([]byte, error) {
	if max == 0 {
		h.init(nil, 0)
		return data, nil
	}
	if len(data) < 4 {
		return nil, fmt.Errorf("level length: %w", errPage)
	}
	n := binary.LittleEndian.Uint32(data)
	if uint64(n) > uint64(len(data)-4) {
		return nil, fmt.Errorf("levels of %d bytes in a page of %d: %w", n, len(data), errPage)
	}
	h.init(data[4:4+n], max)
	return data[4+n:], nil
}

func (h *hybrid) init(data []byte, max int16) {
	h.initWidth(data, uint(bits.Len16(uint16(max))))
	h.zero = max == 0
}

func (h *hybrid) initWidth(data []byte, bw uint) {
	*h = hybrid{data: data, bw: bw}
}

// run starts the next run.
func (h *hybrid) run() error {
	hdr, n := binary.Uvarint(h.data)
	if n <= 0 || hdr>>1 > 1<<31 {
		return fmt.Errorf("run header: %w", errPage)
	}
	h.data = h.data[n:]
	if hdr&1 == 0 {
		w := int(h.bw+7) / 8
		if len(h.data) < w {
			return fmt.Errorf("run value: %w", errPage)
		}
		var v uint32
		for i := w - 1; i >= 0; i-- {
			v = v<<8 | uint32(h.data[i])
		}
		h.rle, h.val, h.data = int(hdr>>1), v, h.data[w:]
		return nil
	}
	groups := int(hdr >> 1)
	if uint64(groups)*uint64(h.bw) > uint64(len(h.data)) {
		// A last run may be cut short of its padding: keep what is there.
		groups = len(h.data) / max(int(h.bw), 1)
	}
	h.packed, h.pos = groups*8, 0
	return nil
}

// readHybrid fills out from h.
func readHybrid[T int16 | int32](h *hybrid, out []T) error {
	if h.zero {
		clear(out)
		return nil
	}
	for len(out) > 0 {
		switch {
		case h.rle > 0:
			k := min(h.rle, len(out))
			v := T(h.val)
			for i := range out[:k] {
				out[i] = v
			}
			h.rle -= k
			out = out[k:]
		case h.packed > 0:
			k := min(h.packed, len(out))
			mask := uint64(1)<<h.bw - 1
			d := h.data
			for i := range out[:k] {
				b := int(h.pos >> 3)
				var w uint64
				if b+8 <= len(d) {
					w = binary.LittleEndian.Uint64(d[b:])
				} else {
					for j := len(d) - 1; j >= b; j-- {
						w = w<<8 | uint64(d[j])
					}
				}
				out[i] = T((w >> (h.pos & 7)) & mask)
				h.pos += uint64(h.bw)
			}
			h.packed -= k
			out = out[k:]
			if h.packed == 0 {
				h.data = h.data[min(int((h.pos+7)>>3), len(h.data)):]
				h.pos = 0
			}
		default:
			if len(h.data) == 0 {
				return fmt.Errorf("levels or indexes end early: %w", errPage)
			}
			if err := h.run(); err != nil {
				return err
			}
		}
	}
	return nil
}
