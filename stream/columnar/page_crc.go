package columnar

import (
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// Parquet page checksums. A page header may hold a CRC-32 of the page's
// bytes as stored (after the header; compressed data, and the levels of a
// v2 page). parquet-mr (Spark, Hive) writes them by default, pyarrow when
// asked (write_page_checksum); arrow-go neither writes nor checks them. A
// pass checks them for the columns it reads, so damage in such a file's
// pages is an error instead of changed counts. A writer that stores them
// stores them on every page: a column chunk whose first page has none is
// not read twice.

// pageHeader is what the checks need of a Parquet PageHeader.
type pageHeader struct {
	compressed int32  // bytes of the page after its header
	crc        uint32 // CRC-32 (IEEE) of those bytes, when hasCRC
	hasCRC     bool
}

// Thrift compact protocol types (the encoding of Parquet's metadata).
const (
	tBoolTrue  = 1
	tBoolFalse = 2
	tByte      = 3
	tI16       = 4
	tI32       = 5
	tI64       = 6
	tDouble    = 7
	tBinary    = 8
	tList      = 9
	tSet       = 10
	tMap       = 11
	tStruct    = 12
	// tMaxDepth bounds nested structs, so that a damaged header cannot
	// make the reader recurse without end.
	tMaxDepth = 32
)

var errThrift = errors.New("malformed page header")

// thriftReader reads Thrift compact protocol values.
type thriftReader struct {
	r *bufio.Reader
	n int64 // bytes read
}

func (t *thriftReader) byte() (byte, error) {
	b, err := t.r.ReadByte()
	if err != nil {
		return 0, err
	}
	t.n++
	return b, nil
}

func (t *thriftReader) uvarint() (uint64, error) {
	var x uint64
	for shift := uint(0); shift < 64; shift += 7 {
		b, err := t.byte()
		if err != nil {
			return 0, err
		}
		x |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return x, nil
		}
	}
	return 0, errThrift
}

func (t *thriftReader) varint() (int64, error) {
	u, err := t.uvarint()
	return int64(u>>1) ^ -int64(u&1), err
}

func (t *thriftReader) discard(n uint64) error {
	if n > 1<<31 {
		return errThrift
	}
	m, err := t.r.Discard(int(n))
	t.n += int64(m)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// fieldHeader reads a struct's next field header; typ 0 is the struct's end.
func (t *thriftReader) fieldHeader(last int16) (id int16, typ byte, err error) {
	b, err := t.byte()
	if err != nil || b == 0 {
		return 0, 0, err
	}
	typ = b & 0x0f
	if d := b >> 4; d != 0 {
		return last + int16(d), typ, nil
	}
	v, err := t.varint()
	return int16(v), typ, err
}

// skip reads past a value of type typ; elem says it is an element of a
// list, set or map (where a bool takes a byte).
func (t *thriftReader) skip(typ byte, elem bool, depth int) error {
	if depth > tMaxDepth {
		return errThrift
	}
	switch typ {
	case tBoolTrue, tBoolFalse:
		if elem {
			_, err := t.byte()
			return err
		}
		return nil
	case tByte:
		_, err := t.byte()
		return err
	case tI16, tI32, tI64:
		_, err := t.uvarint()
		return err
	case tDouble:
		return t.discard(8)
	case tBinary:
		n, err := t.uvarint()
		if err != nil {
			return err
		}
		return t.discard(n)
	case tList, tSet:
		b, err := t.byte()
		if err != nil {
			return err
		}
		n := uint64(b >> 4)
		if n == 15 {
			if n, err = t.uvarint(); err != nil {
				return err
			}
		}
		for range n {
			if err := t.skip(b&0x0f, true, depth+1); err != nil {
				return err
			}
		}
		return nil
	case tMap:
		n, err := t.uvarint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := t.byte()
		if err != nil {
			return err
		}
		for range n {
			if err := t.skip(kv>>4, true, depth+1); err != nil {
				return err
			}
			if err := t.skip(kv&0x0f, true, depth+1); err != nil {
				return err
			}
		}
		return nil
	case tStruct:
		var last int16
		for {
			id, ft, err := t.fieldHeader(last)
			if err != nil || ft == 0 {
				return err
			}
			if err := t.skip(ft, false, depth+1); err != nil {
				return err
			}
			last = id
		}
	}
	return errThrift
}

// readPageHeader reads a PageHeader struct: its compressed size (field 3)
// and CRC (field 4), skipping the rest.
func (t *thriftReader) readPageHeader() (pageHeader, error) {
	var h pageHeader
	var last int16
	seen := false
	for {
		id, typ, err := t.fieldHeader(last)
		if err != nil {
			return h, err
		}
		if typ == 0 {
			break
		}
		switch {
		case id == 3 && typ == tI32:
			v, err := t.varint()
			if err != nil {
				return h, err
			}
			h.compressed, seen = int32(v), true
		case id == 4 && typ == tI32:
			v, err := t.varint()
			if err != nil {
				return h, err
			}
			h.crc, h.hasCRC = uint32(int32(v)), true
		default:
			if err := t.skip(typ, false, 0); err != nil {
				return h, err
			}
		}
		last = id
	}
	if !seen || h.compressed < 0 {
		return h, errThrift
	}
	return h, nil
}

// chunkRange is where a column chunk's pages lie in the file.
func chunkRange(cc *metadata.ColumnChunkMetaData) (start, size int64) {
	start = cc.DataPageOffset()
	if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 {
		start = min(start, cc.DictionaryPageOffset())
	}
	return start, cc.TotalCompressedSize()
}

// checkPageCRCs verifies the CRCs of the pages of the column chunk cc of
// the file f, when its writer stored them. A page without one (the first
// page: a writer that stores none) ends the check.
func checkPageCRCs(f io.ReaderAt, cc *metadata.ColumnChunkMetaData) error {
	start, size := chunkRange(cc)
	if start < 0 || size <= 0 {
		return nil
	}
	t := &thriftReader{r: bufio.NewReaderSize(io.NewSectionReader(f, start, size), 32<<10)}
	h := crc32.NewIEEE()
	for t.n < size {
		at := start + t.n
		ph, err := t.readPageHeader()
		if err != nil {
			return fmt.Errorf("page header at byte %d: %w", at, err)
		}
		if !ph.hasCRC {
			return nil
		}
		h.Reset()
		m, err := io.CopyN(h, t.r, int64(ph.compressed))
		t.n += m
		if err != nil {
			return fmt.Errorf("page at byte %d: %d bytes past the column chunk's end", at, int64(ph.compressed)-m)
		}
		if sum := h.Sum32(); sum != ph.crc {
			return fmt.Errorf("the page at byte %d does not match its CRC (CRC-32 %08x, stored %08x): the file is damaged", at, sum, ph.crc)
		}
	}
	return nil
}
