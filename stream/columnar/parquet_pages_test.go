package columnar

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// encodeHybrid writes vals in Parquet's RLE/bit-packed hybrid encoding with
// width bw: runs of eight or more equal values as RLE runs, the rest
// bit-packed in groups of eight (the last group padded with zeros).
func encodeHybrid(vals []uint32, bw uint) []byte {
	var out []byte
	uvarint := func(x uint64) { out = binary.AppendUvarint(out, x) }
	pack := func(vs []uint32) {
		groups := (len(vs) + 7) / 8
		uvarint(uint64(groups)<<1 | 1)
		buf := make([]byte, groups*int(bw))
		for i, v := range vs {
			for b := range bw {
				if v>>b&1 != 0 {
					bit := uint(i)*bw + b
					buf[bit/8] |= 1 << (bit % 8)
				}
			}
		}
		out = append(out, buf...)
	}
	for i := 0; i < len(vals); {
		j := i
		for j < len(vals) && vals[j] == vals[i] {
			j++
		}
		if j-i >= 8 {
			uvarint(uint64(j-i) << 1)
			for k := range int(bw+7) / 8 {
				out = append(out, byte(vals[i]>>(8*k)))
			}
			i = j
			continue
		}
		// Bit-pack up to the next run of eight, in whole groups of eight.
		end := i
		for end < len(vals) {
			r := end
			for r < len(vals) && vals[r] == vals[end] {
				r++
			}
			if r-end >= 8 && (end-i)%8 == 0 {
				break
			}
			end++
		}
		pack(vals[i:end])
		i = end
	}
	return out
}

func TestHybridDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, bw := range []uint{0, 1, 2, 3, 7, 8, 13, 14, 16, 20, 31, 32} {
		for trial := range 20 {
			n := 1 + r.IntN(3000)
			vals := make([]uint32, n)
			for i := 0; i < n; {
				k := 1 + r.IntN(40)
				v := uint32(r.Uint64() & (1<<bw - 1))
				for ; k > 0 && i < n; k-- {
					if trial%2 == 0 || r.IntN(4) == 0 {
						vals[i] = v
					} else {
						vals[i] = uint32(r.Uint64() & (1<<bw - 1))
					}
					i++
				}
			}
			var h hybrid
			h.initWidth(encodeHybrid(vals, bw), bw)
			got := make([]int32, 0, n)
			for len(got) < n {
				// Reads of random sizes cross run boundaries.
				k := min(n-len(got), 1+r.IntN(100))
				part := make([]int32, k)
				if err := readHybrid(&h, part); err != nil {
					t.Fatalf("bw %d: %v", bw, err)
				}
				got = append(got, part...)
			}
			want := make([]int32, n)
			for i, v := range vals {
				want[i] = int32(v)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("bw %d, %d values: decoded differently", bw, n)
			}
		}
	}
}

func TestHybridErrors(t *testing.T) {
	vals := []uint32{1, 2, 3, 4, 5, 6, 7, 0}
	data := encodeHybrid(vals, 3)
	var h hybrid
	h.initWidth(data, 3)
	if err := readHybrid(&h, make([]int32, 9)); !errors.Is(err, errPage) {
		t.Fatalf("reading past the end: %v, want errPage", err)
	}
	h.initWidth([]byte{0x80}, 3) // unterminated run header
	if err := readHybrid(&h, make([]int32, 1)); !errors.Is(err, errPage) {
		t.Fatalf("bad run header: %v, want errPage", err)
	}
	h.initWidth([]byte{16 << 1}, 16) // RLE run without its value
	if err := readHybrid(&h, make([]int16, 1)); !errors.Is(err, errPage) {
		t.Fatalf("missing run value: %v, want errPage", err)
	}
	var lv hybrid
	if _, err := lv.initPrefixed([]byte{9, 0, 0, 0, 1}, 1); !errors.Is(err, errPage) {
		t.Fatalf("level length beyond the page: %v, want errPage", err)
	}
}

// fakePages serves fixed pages to a pageLeaf.
type fakePages struct {
	file.PageReader // methods pageLeaf does not call
	pages           []file.Page
	at              int
}

func (f *fakePages) Next() bool      { f.at++; return f.at <= len(f.pages) }
func (f *fakePages) Page() file.Page { return f.pages[f.at-1] }
func (f *fakePages) Err() error      { return nil }

// v1Page builds a V1 data page: rep and def levels (max 1 and 2) and the
// values' bytes.
func v1Page(rep, def []uint32, enc parquet.Encoding, values []byte) file.Page {
	var b []byte
	for _, lv := range []struct {
		v  []uint32
		bw uint
	}{{rep, 1}, {def, 2}} {
		e := encodeHybrid(lv.v, lv.bw)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(e)))
		b = append(b, e...)
	}
	b = append(b, values...)
	return file.NewDataPageV1(memory.NewBufferBytes(b), int32(len(rep)), enc, parquet.Encodings.RLE, parquet.Encodings.RLE, int32(len(b)))
}

func TestPageLeaf(t *testing.T) {
	dict := file.NewDictionaryPage(memory.NewBufferBytes(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 10), 20)), 2, parquet.Encodings.Plain)
	// Rows [10 20] [] [20] | [7]: def 1 is an empty list, the second page PLAIN.
	rep, def := []uint32{0, 1, 0, 0, 0}, []uint32{2, 2, 1, 2, 2}
	idx := append([]byte{1}, encodeHybrid([]uint32{0, 1, 1}, 1)...)
	plain := binary.LittleEndian.AppendUint32(nil, 7)
	pages := func(idx []byte) []file.Page {
		return []file.Page{dict, v1Page(rep[:4], def[:4], parquet.Encodings.RLEDict, idx), v1Page(rep[4:], def[4:], parquet.Encodings.Plain, plain)}
	}
	lp := leafPlan{maxDef: 2, entryDef: 1}
	var p pageLeaf
	p.reset(&fakePages{pages: pages(idx)}, lp)
	vals, d, r := make([]int32, 8), make([]int16, 8), make([]int16, 8)
	n, nv, err := p.ReadBatch(8, vals, d, r)
	if err != nil {
		t.Fatal(err)
	}
	if n != 5 || !slices.Equal(vals[:nv], []int32{10, 20, 20, 7}) || !slices.Equal(d[:n], []int16{2, 2, 1, 2, 2}) || !slices.Equal(r[:n], []int16{0, 1, 0, 0, 0}) {
		t.Fatalf("read %d levels %v %v, values %v", n, d[:n], r[:n], vals[:nv])
	}
	// A dictionary index past the dictionary is an error, not a value.
	p.reset(&fakePages{pages: pages(append([]byte{2}, encodeHybrid([]uint32{0, 1, 3}, 2)...))}, lp)
	if _, _, err := p.ReadBatch(8, vals, d, r); !errors.Is(err, errPage) {
		t.Fatalf("index out of range: %v, want errPage", err)
	}
	// So is a dictionary-encoded page without a dictionary page.
	p.reset(&fakePages{pages: pages(idx)[1:]}, lp)
	if _, _, err := p.ReadBatch(8, vals, d, r); !errors.Is(err, errPage) {
		t.Fatalf("no dictionary: %v, want errPage", err)
	}
}
