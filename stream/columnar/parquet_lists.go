package columnar

import (
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// The lists and pairs layouts are read from Parquet straight from the
// repetition and definition levels of their leaf columns, without building
// Arrow list arrays: pqarrow's nested reader spent ~100 ns per entry (profiled:
// delimitRecords and buffer growth), the levels cost a few. A leaf is read a
// batch of rows at a time (leafCursor), so memory does not depend on the size
// of the writer's row groups. INT32 leaves, the common case, are decoded from
// their pages by pageLeaf (parquet_pages.go); other types through arrow-go's
// column reader.

// leafPlan says how to read one list leaf: its column index, the definition
// level at which a row's list has an entry, and whether the integers are
// unsigned (UINT_32/UINT_64 logical types, whose large values would otherwise
// read as negative).
type leafPlan struct {
	col      int
	name     string // the leaf's path, for messages
	entryDef int16
	maxDef   int16
	unsigned bool
}

// planLeaves finds the leaves of a lists or pairs layout that the level reader
// handles (one level of repetition, 32/64-bit ints or floats); ok is false
// when the pqarrow path must be used instead.
func planLeaves(md *metadata.FileMetaData, ds docSchema) (terms, counts leafPlan, ok bool) {
	find := func(top, leaf string) (leafPlan, bool) {
		found, n := leafPlan{}, 0
		for i := range md.Schema.NumColumns() {
			c := md.Schema.Column(i)
			p := c.ColumnPath()
			if p[0] != top || (leaf != "" && p[len(p)-1] != leaf) {
				continue
			}
			n++
			if c.MaxRepetitionLevel() != 1 {
				return found, false
			}
			switch c.PhysicalType() {
			case parquet.Types.Int32, parquet.Types.Int64, parquet.Types.Float, parquet.Types.Double:
			default:
				return found, false
			}
			found = leafPlan{col: i, name: c.ColumnPath().String(), maxDef: c.MaxDefinitionLevel(), entryDef: repeatedDef(c), unsigned: isUnsigned(c)}
		}
		return found, n == 1
	}
	var ok1, ok2 bool
	switch ds.layout {
	case LayoutLists:
		terms, ok1 = find(ds.cols[0], "")
		counts, ok2 = find(ds.cols[1], "")
	case LayoutPairs:
		terms, ok1 = find(ds.cols[0], ds.term)
		counts, ok2 = find(ds.cols[0], ds.count)
	}
	return terms, counts, ok1 && ok2
}

// isUnsigned reports an unsigned integer logical or converted type.
func isUnsigned(c *schema.Column) bool {
	if it, ok := c.LogicalType().(*schema.IntLogicalType); ok {
		return !it.IsSigned()
	}
	switch c.ConvertedType() {
	case schema.ConvertedTypes.Uint8, schema.ConvertedTypes.Uint16, schema.ConvertedTypes.Uint32, schema.ConvertedTypes.Uint64:
		return true
	}
	return false
}

// repeatedDef is the definition level of the repeated ancestor of a leaf: a
// level at or above it means the row's list has an entry here.
func repeatedDef(c *schema.Column) int16 {
	var path []schema.Node
	for n := c.SchemaNode(); n != nil && n.Parent() != nil; n = n.Parent() {
		path = append(path, n)
	}
	var def int16
	for i := len(path) - 1; i >= 0; i-- {
		r := path[i].RepetitionType()
		if r == parquet.Repetitions.Optional || r == parquet.Repetitions.Repeated {
			def++
		}
		if r == parquet.Repetitions.Repeated {
			return def
		}
	}
	return def
}

// levelBatch is the number of levels read per call: arrow-go's writer puts
// this many levels in a page, and its column reader allocates 4 kB for each
// page a call touches.
const levelBatch = 1 << 18

// leafScratch holds the buffers of one leafCursor: levels and values read
// from the column but not yet handed out, and conversion space.
type leafScratch struct {
	def, rep []int16
	vals     []int32
	i64      []int64
	f64      []float64
	f32      []float32
	page     pageLeaf
}

// leafCursor reads one list leaf of a row group a batch of rows at a time.
type leafCursor struct {
	cr file.ColumnChunkReader // nil when pl reads the pages
	pl *pageLeaf
	lp leafPlan
	sc *leafScratch
	// def/rep[pos:n] are levels read but not consumed, vals[vpos:nv] their values.
	pos, n, vpos, nv int
	// badAt is the index in vals of a value the conversion rejected, or -1.
	badAt  int
	badMsg string
	open   bool  // a row has started and not ended
	rows   int64 // rows completed so far
}

// badEntry is the first rejected entry of a batch: the row (within the batch)
// holding it and what is wrong.
type badEntry struct {
	row int
	msg string
}

func newLeafCursor(rg *file.RowGroupReader, lp leafPlan, sc *leafScratch) (*leafCursor, error) {
	// Room for levelBatch levels, or for the chunk's levels when it holds
	// fewer: a small file is not read with megabytes of scratch. (A
	// damaged count only changes how many calls read the chunk.)
	n := levelBatch
	cc, err := rg.MetaData().ColumnChunk(lp.col)
	if err == nil && cc.NumValues() >= 0 {
		n = int(min(max(cc.NumValues(), 1<<10), levelBatch))
	}
	if len(sc.def) < n {
		sc.def, sc.rep, sc.vals = make([]int16, n), make([]int16, n), make([]int32, n)
	}
	c := &leafCursor{lp: lp, sc: sc, badAt: -1}
	if err == nil && pageLeafOK(cc, lp) {
		pr, err := rg.GetColumnPageReader(lp.col)
		if err != nil {
			return nil, err
		}
		sc.page.reset(pr, lp)
		c.pl = &sc.page
		return c, nil
	}
	cr, err := rg.Column(lp.col)
	if err != nil {
		return nil, err
	}
	c.cr = cr
	return c, nil
}

// close hands the page buffers back to the pass's bufPool.
func (c *leafCursor) close() {
	if c.pl != nil {
		c.pl.pr.Close()
		c.pl.pr = nil
		return
	}
	c.cr.Close()
}

// fill reads the next levels and values; n == 0 afterwards means the column
// chunk is exhausted.
func (c *leafCursor) fill() error {
	c.pos, c.n, c.vpos, c.nv, c.badAt = 0, 0, 0, 0, -1
	sc := c.sc
	var (
		total int64
		nv    int
		err   error
	)
	if c.pl != nil {
		if total, nv, err = c.pl.ReadBatch(len(sc.def), sc.vals, sc.def, sc.rep); err != nil {
			return err
		}
		c.n, c.nv = int(total), nv
		return nil
	}
	if !c.cr.HasNext() {
		return c.cr.Err()
	}
	bad := func(j int, msg string) {
		if c.badAt < 0 {
			c.badAt, c.badMsg = j, msg
		}
	}
	switch r := c.cr.(type) {
	case *file.Int32ColumnChunkReader:
		total, nv, err = r.ReadBatch(int64(len(sc.def)), sc.vals, sc.def, sc.rep)
		if c.lp.unsigned {
			for j, x := range sc.vals[:nv] {
				if x < 0 {
					bad(j, fmt.Sprintf("value %d does not fit in 32 bits", uint32(x)))
					break
				}
			}
		}
	case *file.Int64ColumnChunkReader:
		sc.i64 = grow(sc.i64, len(sc.def))
		total, nv, err = r.ReadBatch(int64(len(sc.def)), sc.i64, sc.def, sc.rep)
		for j, x := range sc.i64[:nv] {
			if x > math.MaxInt32 || x < math.MinInt32 || (c.lp.unsigned && x < 0) {
				if c.lp.unsigned {
					bad(j, fmt.Sprintf("value %d does not fit in 32 bits", uint64(x)))
				} else {
					bad(j, fmt.Sprintf("value %d does not fit in 32 bits", x))
				}
			}
			sc.vals[j] = int32(x)
		}
	case *file.Float64ColumnChunkReader:
		sc.f64 = grow(sc.f64, len(sc.def))
		total, nv, err = r.ReadBatch(int64(len(sc.def)), sc.f64, sc.def, sc.rep)
		if _, _, b := floats(sc.f64[:nv], sc.vals); b != nil {
			bad(b.at, b.msg)
		}
	case *file.Float32ColumnChunkReader:
		sc.f32 = grow(sc.f32, len(sc.def))
		total, nv, err = r.ReadBatch(int64(len(sc.def)), sc.f32, sc.def, sc.rep)
		if _, _, b := floats(sc.f32[:nv], sc.vals); b != nil {
			bad(b.at, b.msg)
		}
	default:
		return errors.New("unsupported physical type")
	}
	if err != nil {
		return err
	}
	c.n, c.nv = int(total), nv
	return nil
}

// next appends up to want whole rows to off/out: row i's values are
// out[off[i]:off[i+1]], and off must hold the start of the first row. It
// returns the number of rows read (fewer than want only at the end of the
// column chunk) and the first entry that was null or did not convert.
func (c *leafCursor) next(want int, off *[]int, out *[]int32) (int, *badEntry, error) {
	got := 0
	first := len(*off) - 1 // row index of the batch's first row in off
	var bad *badEntry
	entryDef, maxDef := c.lp.entryDef, c.lp.maxDef
	for got < want {
		if c.pos == c.n {
			if c.vpos != c.nv {
				return got, bad, fmt.Errorf("levels describe %d values, page holds %d", c.vpos, c.nv)
			}
			if err := c.fill(); err != nil {
				return got, bad, err
			}
			if c.n == 0 {
				if c.open {
					*off = append(*off, len(*out))
					got++
					c.rows++
					c.open = false
				}
				break
			}
		}
		// Repetition 0 starts a row; a definition level at or above entryDef
		// is an entry, which must be fully defined to have a value.
		def, rep := c.sc.def[c.pos:c.n], c.sc.rep[c.pos:c.n]
		rep = rep[:len(def)]
		base, k, j := len(*out), 0, 0
		open := c.open
		for ; j < len(def); j++ {
			if rep[j] == 0 && open {
				*off = append(*off, base+k)
				got++
				c.rows++
				if got == want {
					open = false
					break
				}
			}
			open = true
			if d := def[j]; d >= entryDef {
				if d == maxDef {
					k++
				} else if bad == nil {
					bad = &badEntry{len(*off) - 1 - first, "null entry"}
				}
			}
		}
		c.open = open
		if k > c.nv-c.vpos {
			return got, bad, errors.New("levels describe more values than the page holds")
		}
		if c.badAt >= c.vpos && c.badAt < c.vpos+k && bad == nil {
			// The rejected value lands at out[base+badAt-vpos]; find its row.
			at := base + c.badAt - c.vpos
			bad = &badEntry{int(rowOf((*off)[first:], at)), c.badMsg}
		}
		*out = append(*out, c.sc.vals[c.vpos:c.vpos+k]...)
		c.vpos += k
		c.pos += j
	}
	// Every level consumed belongs to a row closed above, so bad.row < got.
	return got, bad, nil
}
