package columnar

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// The lists and pairs layouts are read from Parquet straight from the
// repetition and definition levels of their leaf columns, without building
// Arrow list arrays: pqarrow's nested reader spent ~100 ns per entry (profiled:
// delimitRecords and buffer growth), the levels cost a few.

// rawList is one list leaf of a row group: row i holds vals[off[i]:off[i+1]].
type rawList struct {
	off  []int32
	vals []int32
	// bad is the first rejected entry (a null or a count that is not a whole
	// non-negative number), at its index in vals.
	bad *badValue
}

// leafPlan says how to read one list leaf: its column index and the
// definition level at which a row's list has an entry.
type leafPlan struct {
	col      int
	entryDef int16
	maxDef   int16
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
			found = leafPlan{col: i, maxDef: c.MaxDefinitionLevel(), entryDef: repeatedDef(c)}
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

// levelBatch is the number of levels read per call.
const levelBatch = 1 << 16

// listScratch holds the level buffers of one reader.
type listScratch struct {
	def, rep []int16
	i64      []int64
	f64      []float64
	f32      []float32
}

// readList reads one list leaf of a row group of rows rows.
func readList(rg *file.RowGroupReader, lp leafPlan, rows int64, sc *listScratch, into rawList) (rawList, error) {
	cr, err := rg.Column(lp.col)
	if err != nil {
		return into, err
	}
	if sc.def == nil {
		sc.def, sc.rep = make([]int16, levelBatch), make([]int16, levelBatch)
	}
	out := rawList{off: into.off[:0], vals: into.vals[:0]}
	out.off = append(out.off, 0)
	started := false
	for cr.HasNext() {
		start := len(out.vals)
		out.vals = slices.Grow(out.vals, levelBatch)
		dst := out.vals[start : start+levelBatch]
		var total int64
		var nv int
		switch r := cr.(type) {
		case *file.Int32ColumnChunkReader:
			total, nv, err = r.ReadBatch(levelBatch, dst, sc.def, sc.rep)
		case *file.Int64ColumnChunkReader:
			sc.i64 = grow(sc.i64, levelBatch)
			total, nv, err = r.ReadBatch(levelBatch, sc.i64, sc.def, sc.rep)
			for j, x := range sc.i64[:nv] {
				if x > 1<<31-1 || x < -1<<31 {
					if out.bad == nil {
						out.bad = &badValue{start + j, fmt.Sprintf("value %d does not fit in 32 bits", x)}
					}
				}
				dst[j] = int32(x)
			}
		case *file.Float64ColumnChunkReader:
			sc.f64 = grow(sc.f64, levelBatch)
			total, nv, err = r.ReadBatch(levelBatch, sc.f64, sc.def, sc.rep)
			if _, _, b := floats(sc.f64[:nv], dst); b != nil && out.bad == nil {
				out.bad = &badValue{start + b.at, b.msg}
			}
		case *file.Float32ColumnChunkReader:
			sc.f32 = grow(sc.f32, levelBatch)
			total, nv, err = r.ReadBatch(levelBatch, sc.f32, sc.def, sc.rep)
			if _, _, b := floats(sc.f32[:nv], dst); b != nil && out.bad == nil {
				out.bad = &badValue{start + b.at, b.msg}
			}
		default:
			return out, fmt.Errorf("column %d: unsupported physical type", lp.col)
		}
		if err != nil {
			return out, err
		}
		if total == 0 {
			break
		}
		// Walk the levels: repetition 0 starts a row; a definition level at or
		// above entryDef is an entry, which must be fully defined.
		k := start
		for j, d := range sc.def[:total] {
			if sc.rep[j] == 0 {
				if started {
					out.off = append(out.off, int32(k))
				}
				started = true
			}
			if d >= lp.entryDef {
				if d < lp.maxDef {
					if out.bad == nil {
						out.bad = &badValue{k, "null entry"}
					}
					continue
				}
				k++
			}
		}
		if k-start != nv {
			return out, fmt.Errorf("column %d: levels describe %d values, page holds %d", lp.col, k-start, nv)
		}
		out.vals = out.vals[:k]
	}
	if started {
		out.off = append(out.off, int32(len(out.vals)))
	}
	if int64(len(out.off)-1) != rows {
		return out, fmt.Errorf("column %d: %d rows, row group says %d", lp.col, len(out.off)-1, rows)
	}
	return out, nil
}
