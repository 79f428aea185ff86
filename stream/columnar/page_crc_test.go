package columnar

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/streamfit/streamfit/stream"
)

// arrow-go writes no page CRCs; parquet-mr (Spark) does. withPageCRCs
// rewrites a Parquet file as such a writer would have written it: every
// page header gains its CRC-32, and the footer's offsets and sizes move
// with the longer headers. It decodes and encodes Thrift's compact
// protocol generically (tval).

// tval is a Thrift compact protocol value.
type tval struct {
	typ    byte
	i      int64    // bool (0/1), byte, i16, i32, i64
	raw    []byte   // binary, double
	fields []tfield // struct
	etyp   byte     // list, set: element type; map: key<<4 | value
	elems  []tval   // list, set; map: keys and values alternating
}

type tfield struct {
	id int16
	v  tval
}

type tdec struct {
	b   []byte
	pos int
}

func (d *tdec) byte() byte { d.pos++; return d.b[d.pos-1] }

func (d *tdec) uvarint() uint64 {
	x, n := binary.Uvarint(d.b[d.pos:])
	d.pos += n
	return x
}

func (d *tdec) value(typ byte, elem bool) tval {
	v := tval{typ: typ}
	switch typ {
	case tBoolTrue, tBoolFalse:
		v.typ, v.i = tBoolTrue, 1
		if elem && d.byte() != 1 || !elem && typ == tBoolFalse {
			v.i = 0
		}
	case tByte:
		v.i = int64(d.byte())
	case tI16, tI32, tI64:
		u := d.uvarint()
		v.i = int64(u>>1) ^ -int64(u&1)
	case tDouble:
		v.raw = d.b[d.pos : d.pos+8]
		d.pos += 8
	case tBinary:
		n := int(d.uvarint())
		v.raw = d.b[d.pos : d.pos+n]
		d.pos += n
	case tList, tSet:
		h := d.byte()
		n := int(h >> 4)
		if n == 15 {
			n = int(d.uvarint())
		}
		v.etyp = h & 0x0f
		for range n {
			v.elems = append(v.elems, d.value(v.etyp, true))
		}
	case tMap:
		n := int(d.uvarint())
		if n > 0 {
			v.etyp = d.byte()
		}
		for range n {
			v.elems = append(v.elems, d.value(v.etyp>>4, true), d.value(v.etyp&0x0f, true))
		}
	case tStruct:
		var last int16
		for {
			h := d.byte()
			if h == 0 {
				break
			}
			id := last + int16(h>>4)
			if h>>4 == 0 {
				u := d.uvarint()
				id = int16(int64(u>>1) ^ -int64(u&1))
			}
			v.fields = append(v.fields, tfield{id, d.value(h&0x0f, false)})
			last = id
		}
	}
	return v
}

func (v tval) encode(w *bytes.Buffer, elem bool) {
	zig := func(x int64) { w.Write(binary.AppendUvarint(nil, uint64(x<<1^x>>63))) }
	switch v.typ {
	case tBoolTrue:
		if elem {
			w.WriteByte(byte(2 - v.i))
		}
	case tByte:
		w.WriteByte(byte(v.i))
	case tI16, tI32, tI64:
		zig(v.i)
	case tDouble:
		w.Write(v.raw)
	case tBinary:
		w.Write(binary.AppendUvarint(nil, uint64(len(v.raw))))
		w.Write(v.raw)
	case tList, tSet:
		if n := len(v.elems); n < 15 {
			w.WriteByte(byte(n<<4) | v.etyp)
		} else {
			w.WriteByte(0xf0 | v.etyp)
			w.Write(binary.AppendUvarint(nil, uint64(n)))
		}
		for _, e := range v.elems {
			e.encode(w, true)
		}
	case tMap:
		w.Write(binary.AppendUvarint(nil, uint64(len(v.elems)/2)))
		if len(v.elems) > 0 {
			w.WriteByte(v.etyp)
		}
		for _, e := range v.elems {
			e.encode(w, true)
		}
	case tStruct:
		var last int16
		for _, f := range v.fields {
			typ := f.v.typ
			if typ == tBoolTrue && f.v.i == 0 {
				typ = tBoolFalse
			}
			if d := f.id - last; d > 0 && d <= 15 {
				w.WriteByte(byte(d<<4) | typ)
			} else {
				w.WriteByte(typ)
				zig(int64(f.id))
			}
			f.v.encode(w, false)
			last = f.id
		}
		w.WriteByte(0)
	}
}

func (v *tval) field(id int16) *tval {
	for i := range v.fields {
		if v.fields[i].id == id {
			return &v.fields[i].v
		}
	}
	return nil
}

// withPageCRCs returns the Parquet file data with a CRC-32 in every page
// header. The file must have no page index and no bloom filters.
func withPageCRCs(t testing.TB, data []byte) []byte {
	t.Helper()
	flen := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	fstart := len(data) - 8 - flen
	footer := (&tdec{b: data[fstart : len(data)-8]}).value(tStruct, false)
	type edit struct {
		at, oldLen int
		header     []byte
	}
	var edits []edit
	for _, rg := range footer.field(4).elems {
		for _, cc := range rg.field(1).elems {
			md := cc.field(3)
			start := md.field(9).i
			if d := md.field(11); d != nil && d.i > 0 {
				start = min(start, d.i)
			}
			end := start + md.field(7).i
			for at := int(start); at < int(end); {
				d := &tdec{b: data, pos: at}
				h := d.value(tStruct, false)
				body := data[d.pos : d.pos+int(h.field(3).i)]
				h.fields = append(h.fields, tfield{4, tval{typ: tI32, i: int64(int32(crc32.ChecksumIEEE(body)))}})
				slices.SortFunc(h.fields, func(a, b tfield) int { return int(a.id) - int(b.id) })
				var w bytes.Buffer
				h.encode(&w, false)
				edits = append(edits, edit{at, d.pos - at, w.Bytes()})
				at = d.pos + len(body)
			}
		}
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.at - b.at })
	// moved is where byte off of the old file lands: after the headers
	// that start before it have grown.
	moved := func(off int64) int64 {
		to := off
		for _, e := range edits {
			if int64(e.at) < off {
				to += int64(len(e.header) - e.oldLen)
			}
		}
		return to
	}
	for i := range footer.field(4).elems {
		rg := &footer.field(4).elems[i]
		var grew int64
		for j := range rg.field(1).elems {
			cc := &rg.field(1).elems[j]
			md := cc.field(3)
			start, size := md.field(9).i, md.field(7).i
			if d := md.field(11); d != nil && d.i > 0 {
				start = min(start, d.i)
			}
			n := moved(start+size) - moved(start)
			grew += n - size
			md.field(7).i = n
			for _, id := range []int16{9, 10, 11} {
				if f := md.field(id); f != nil && f.i > 0 {
					f.i = moved(f.i)
				}
			}
			if f := cc.field(2); f != nil && f.i > 0 {
				f.i = moved(f.i)
			}
		}
		if f := rg.field(5); f != nil {
			f.i = moved(f.i)
		}
		if f := rg.field(6); f != nil {
			f.i += grew
		}
	}
	var out bytes.Buffer
	last := 0
	for _, e := range edits {
		out.Write(data[last:e.at])
		out.Write(e.header)
		last = e.at + e.oldLen
	}
	out.Write(data[last:fstart])
	var fw bytes.Buffer
	footer.encode(&fw, false)
	out.Write(fw.Bytes())
	out.Write(binary.LittleEndian.AppendUint32(nil, uint32(fw.Len())))
	out.WriteString("PAR1")
	return out.Bytes()
}

// A file whose writer stored page CRCs is checked against them: a byte
// changed in a page's values, which the decoders cannot notice (a plain,
// uncompressed page of term ids), is an error naming the file, the column
// and the page, for the level reader (lists) and for pqarrow's (long).
func TestPageCRCs(t *testing.T) {
	dir := t.TempDir()
	for _, layout := range []string{"lists", "long"} {
		t.Run(layout, func(t *testing.T) {
			rec := otherRecord(layout, 300, 5)
			defer rec.Release()
			var buf bytes.Buffer
			props := parquet.NewWriterProperties(parquet.WithDictionaryDefault(false), parquet.WithCompression(compress.Codecs.Uncompressed),
				parquet.WithDataPageSize(256), parquet.WithMaxRowGroupLength(100), parquet.WithStats(false))
			w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, props, pqarrow.DefaultWriterProps())
			writeClose(t, w, err, rec)
			plain := buf.Bytes()
			crcs := withPageCRCs(t, plain)
			if len(crcs) <= len(plain) {
				t.Fatal("no CRC was added")
			}
			read := func(name string, data []byte) (*stream.Docs, error) {
				path := filepath.Join(dir, name)
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
				src, err := stream.Open(path, stream.Options{Workers: 2, BatchRows: 40})
				if err != nil {
					return nil, err
				}
				return stream.Collect(context.Background(), src)
			}
			want, err := read("plain.parquet", plain)
			if err != nil {
				t.Fatal(err)
			}
			got, err := read("crc.parquet", crcs)
			if err != nil {
				t.Fatalf("intact file with page CRCs: %v", err)
			}
			sameDocs(t, got, want)

			// A bit of the last term id of the first page of row group 1's
			// term ids (leaf 0 of the lists, column 1 of the long table):
			// without CRCs the documents change and nothing notices.
			col := map[string]int{"lists": 0, "long": 1}[layout]
			flip := func(data []byte) []byte {
				t.Helper()
				flen := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
				footer := (&tdec{b: data[len(data)-8-flen : len(data)-8]}).value(tStruct, false)
				md := footer.field(4).elems[1].field(1).elems[col].field(3)
				d := &tdec{b: data, pos: int(md.field(9).i)}
				h := d.value(tStruct, false)
				c := slices.Clone(data)
				c[d.pos+int(h.field(3).i)-4] ^= 0x01
				return c
			}
			silent, err := read("plain-bad.parquet", flip(plain))
			if err != nil || slices.Equal(silent.Terms, want.Terms) {
				t.Fatalf("without CRCs the flip should change the documents silently: %v", err)
			}
			_, err = read("crc-bad.parquet", flip(crcs))
			checkErr(t, err, stream.ErrCorrupt, filepath.Join(dir, "crc-bad.parquet"), -1, map[string]string{"lists": "terms.list.element", "long": "term"}[layout], "does not match its CRC")
		})
	}
}
