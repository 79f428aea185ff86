package columnar

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"golang.org/x/sync/errgroup"

	"github.com/streamfit/streamfit/internal/mmap"
	"github.com/streamfit/streamfit/stream"
)

// readBufferSize is the buffer of the Parquet column streams, which are read
// page by page instead of a whole column chunk at once. It only has to hold
// a page header: a page body larger than the buffer is read straight into
// the page reader's own (pooled) buffer. arrow-go makes this buffer anew for
// every column chunk, outside the allocator, so it is kept small: at 1 MB it
// was 2 MB of garbage per row group.
const readBufferSize = 16 << 10

// emitRange hands out the pieces [lo, hi) of a file in order.
func emitRange(lo, hi int) func(ctx context.Context, emit func(piece, int64) bool) error {
	return func(ctx context.Context, emit func(piece, int64) bool) error {
		for i := lo; i < hi; i++ {
			if !emit(piece{idx: i}, 0) {
				return nil
			}
		}
		return nil
	}
}

// parquetReader is one worker's view of a Parquet file: readers share the
// parsed footer and the file handle (ReadAt is safe for concurrent use) but
// not their decoding state.
type parquetReader struct {
	fr *pqarrow.FileReader
	sc [2]leafScratch
	// coff holds the counts' row offsets of a run, reused across row groups.
	coff []int
}

// parquetPieces reads row groups, each in runs of rows(…) rows, from the levels
// when the table has a plan and through pqarrow's record reader otherwise.
// Column streams are read page by page, so memory does not grow with the
// row group.
func parquetPieces(f stream.File, t *table, o stream.Options, cols []string, rows runRows, free *stream.FreeList) (func(context.Context, func(piece, int64) bool) error, loader, error) {
	pool := make(chan *parquetReader, o.Workers)
	// The level readers close their page readers, handing the buffers back
	// to the pool; pqarrow's readers keep Go's allocator.
	var mem memory.Allocator = memory.DefaultAllocator
	if t.plan != nil {
		mem = &bufPool{}
	}
	props := parquet.NewReaderProperties(mem)
	props.BufferedStreamEnabled = true
	props.BufferSize = readBufferSize
	newReader := func() (*parquetReader, error) {
		pr, err := file.NewParquetReader(f, file.WithMetadata(t.meta), file.WithReadProps(props))
		if err != nil {
			return nil, err
		}
		// Not Parallel: pqarrow's own goroutines would end the process on
		// a panic; readFields reads the fields in parallel instead.
		// BatchSize is set for each row group (its runs' rows) before it is read.
		fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		return &parquetReader{fr: fr}, err
	}
	crcs, err := rowGroupCRCs(t.meta)
	if err != nil {
		return nil, nil, err
	}
	first, err := newReader()
	if err != nil {
		return nil, nil, err
	}
	pool <- first
	fields := leaves(first.fr, cols)
	// The leaves a pass reads, whose page CRCs it checks.
	var read []leafName
	if t.plan != nil {
		read = []leafName{{t.plan[0].col, t.plan[0].name}, {t.plan[1].col, t.plan[1].name}}
	} else {
		for _, f := range fields {
			for _, l := range f.leaves {
				read = append(read, leafName{l, f.name})
			}
		}
	}
	load := func(ctx context.Context, p piece, rows runRows, each func(loaded) error) error {
		var r *parquetReader
		select {
		case r = <-pool:
		default:
			var err error
			if r, err = newReader(); err != nil {
				return err
			}
		}
		defer func() {
			select {
			case pool <- r:
			default:
			}
		}()
		if crcs != nil {
			if err := checkRowGroup(f, t.meta, p.idx, crcs[p.idx]); err != nil {
				return err
			}
		} else {
			rg := t.meta.RowGroup(p.idx)
			for _, l := range read {
				cc, err := rg.ColumnChunk(l.col)
				if err == nil {
					err = checkPageCRCs(f, cc)
				}
				if err != nil {
					return inColumn(l.name, err)
				}
			}
		}
		bytes := rowGroupBytes(t.meta, p.idx)
		n := t.meta.RowGroup(p.idx).NumRows()
		cut := rows(n, leafValues(t.meta, p.idx, read))
		var done int64
		run := func(l loaded) error {
			k := l.rows()
			l.bytes = share(bytes, done+k, n) - share(bytes, done, n)
			done += k
			return each(l)
		}
		if t.plan != nil {
			return levelRuns(ctx, r, t.plan, r.fr.ParquetReader().RowGroup(p.idx), n, cut, free, run)
		}
		r.fr.Props.BatchSize = int64(cut)
		if err := readFields(ctx, r.fr, fields, p.idx, run); err != nil {
			return err
		}
		if done != n {
			return errRows(done, n)
		}
		return nil
	}
	return emitRange(t.lo, t.hi), load, nil
}

// leafValues is the most values (entries and empty lists) any of the
// leaves read holds in row group rg, from the footer.
func leafValues(md *metadata.FileMetaData, rg int, read []leafName) int64 {
	var n int64
	for _, l := range read {
		if cc, err := md.RowGroup(rg).ColumnChunk(l.col); err == nil {
			n = max(n, cc.NumValues())
		}
	}
	return n
}

// recordValues is the most list values any column of rec holds (a
// struct's: the most of its fields').
func recordValues(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n = max(n, listValues(c))
	}
	return n
}

func listValues(a arrow.Array) int64 {
	if st, ok := a.(*array.Struct); ok {
		var n int64
		for i := range st.NumField() {
			n = max(n, listValues(st.Field(i)))
		}
		return n
	}
	switch o32, o64, _ := offsets(a); {
	case len(o32) > 0:
		return max(int64(o32[len(o32)-1]-o32[0]), 0)
	case len(o64) > 0:
		return max(o64[len(o64)-1]-o64[0], 0)
	}
	return 0
}

// levelRuns reads the two leaves of a plan in step, rows rows at a time.
func levelRuns(ctx context.Context, r *parquetReader, plan *[2]leafPlan, rg *file.RowGroupReader, n int64, rows int, free *stream.FreeList, run func(loaded) error) error {
	var tc, cc *leafCursor
	err := inColumn(plan[0].name, guard(func() (err error) { tc, err = newLeafCursor(rg, plan[0], &r.sc[0]); return err }))
	if err != nil {
		return err
	}
	// Closing hands the page readers' buffers back to the pass's bufPool.
	defer tc.close()
	err = inColumn(plan[1].name, guard(func() (err error) { cc, err = newLeafCursor(rg, plan[1], &r.sc[1]); return err }))
	if err != nil {
		return err
	}
	defer cc.close()
	// A batch is sized once for a quarter more than the row group's average
	// entries per row, instead of growing by doubling: less garbage, and a
	// reused batch rarely grows again, so the pass's memory does not creep
	// up with the largest batch seen so far. The estimate moves a little
	// (0.1–0.2%) from one row group to the next, so a batch that must grow
	// takes an eighth more: resized exactly, every batch was reallocated
	// again and again over a long file (118 times instead of 26 in a pass
	// over 800,000 documents), and the garbage raised the peak RSS of a fit
	// from 118 to 206 MB.
	var est int
	if ccm, err := rg.MetaData().ColumnChunk(plan[0].col); err == nil && n > 0 {
		est = int(min(float64(rows)*float64(ccm.NumValues())/float64(n)*1.25, maxReserve))
	}
	coff := r.coff
	defer func() { r.coff = coff }()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b := newDocs(free, 0)
		b.Reserve(est, est+est/8)
		b.Offsets = slices.Grow(b.Offsets, rows)
		coff = slices.Grow(append(coff[:0], 0), rows)
		// The two columns decode at once: a row group is then read on two
		// cores however large it is, even when the budget holds the other
		// workers back.
		var (
			got        int
			tbad, cbad *badEntry
			terr, cerr error
			wg         sync.WaitGroup
		)
		// Each on a goroutine of its own: a panic must be recovered there.
		wg.Go(func() {
			terr = inColumn(plan[0].name, guard(func() (err error) {
				got, tbad, err = tc.next(rows, &b.Offsets, &b.Terms)
				return err
			}))
		})
		cerr = inColumn(plan[1].name, guard(func() (err error) {
			_, cbad, err = cc.next(rows, &coff, &b.Counts)
			return err
		}))
		wg.Wait()
		err := cmp.Or(terr, cerr)
		if err != nil || b.Len() == 0 && len(coff) == 1 {
			b.Release()
			if err != nil {
				return err
			}
			break
		}
		if err := run(loaded{docs: b, coff: coff, tbad: tbad, cbad: cbad}); err != nil {
			return err
		}
		if got < rows {
			break
		}
	}
	if tc.rows != n || cc.rows != n {
		return errRows(min(tc.rows, cc.rows), n)
	}
	return nil
}

// leafName is a Parquet leaf column and the name its errors give.
type leafName struct {
	col  int
	name string
}

// readFields reads the fields of row group rg through pqarrow's record
// readers, one reader per field, the fields of a run decoding at once (doc,
// term and count of a long table on as many cores), each on a goroutine that
// recovers a decoder's panic and names the field. run gets the runs as
// records of all the fields; it must release them.
func readFields(ctx context.Context, fr *pqarrow.FileReader, fields []fieldLeaves, rg int, run func(loaded) error) error {
	rrs := make([]pqarrow.RecordReader, len(fields))
	defer func() {
		for _, rr := range rrs {
			if rr != nil {
				rr.Release()
			}
		}
	}()
	for i, f := range fields {
		err := inColumn(f.name, guard(func() (err error) { rrs[i], err = fr.GetRecordReader(ctx, f.leaves, []int{rg}); return err }))
		if err != nil {
			return err
		}
	}
	recs := make([]arrow.RecordBatch, len(fields))
	next := func(i int) error {
		return inColumn(fields[i].name, guard(func() error {
			recs[i] = nil
			if rrs[i].Next() {
				recs[i] = rrs[i].RecordBatch()
				return nil
			}
			if err := rrs[i].Err(); err != nil && err != io.EOF {
				return err
			}
			return nil
		}))
	}
	for {
		if len(fields) == 1 {
			if err := next(0); err != nil {
				return err
			}
		} else {
			var g errgroup.Group
			g.SetLimit(runtime.GOMAXPROCS(0))
			for i := range fields {
				g.Go(func() error { return next(i) })
			}
			if err := g.Wait(); err != nil {
				return err
			}
		}
		rows, ended := int64(-1), 0
		for i, rec := range recs {
			switch {
			case rec == nil:
				ended++
			case rows < 0:
				rows = rec.NumRows()
			case rec.NumRows() != rows:
				return fmt.Errorf("column %q holds %d rows where column %q holds %d", fields[i].name, rec.NumRows(), fields[0].name, rows)
			}
		}
		if ended == len(recs) {
			return nil
		}
		if ended > 0 {
			for i, rec := range recs {
				if rec == nil {
					return inColumn(fields[i].name, errors.New("the column ends before the others"))
				}
			}
		}
		cols := make([]arrow.Array, len(recs))
		fs := make([]arrow.Field, len(recs))
		for i, rec := range recs {
			cols[i], fs[i] = rec.Column(0), rec.Schema().Field(0)
		}
		// The record holds its own references: the readers release theirs
		// at their next Next.
		if err := run(loaded{recs: []arrow.RecordBatch{array.NewRecordBatch(arrow.NewSchema(fs, nil), cols, rows)}}); err != nil {
			return err
		}
	}
}

// errRows: the columns of a row group end before or after its row count.
func errRows(got, want int64) error {
	return fmt.Errorf("columns hold %d rows, the row group says %d", got, want)
}

// rowGroupCRCs returns the row groups' checksums the file holds
// (MetaRowGroupCRC), or nil when it holds none (a file another tool wrote).
func rowGroupCRCs(md *metadata.FileMetaData) ([]uint32, error) {
	v := md.KeyValueMetadata().FindValue(MetaRowGroupCRC)
	if v == nil {
		return nil, nil
	}
	var crcs []uint32
	if *v != "" {
		for _, h := range strings.Split(*v, ",") {
			c, err := strconv.ParseUint(h, 16, 32)
			if err != nil {
				return nil, fmt.Errorf("%w: metadata %s: %q is not a checksum", stream.ErrCorrupt, MetaRowGroupCRC, h)
			}
			crcs = append(crcs, uint32(c))
		}
	}
	if len(crcs) != md.NumRowGroups() {
		return nil, fmt.Errorf("%w: metadata %s holds %d checksums for %d row groups", stream.ErrCorrupt, MetaRowGroupCRC, len(crcs), md.NumRowGroups())
	}
	return crcs, nil
}

// checkRowGroup verifies the stored bytes of row group i (from its first
// column chunk's first page to its last one's end) against want.
func checkRowGroup(f io.ReaderAt, md *metadata.FileMetaData, i int, want uint32) error {
	rg := md.RowGroup(i)
	lo, hi := int64(-1), int64(0)
	for c := range rg.NumColumns() {
		cc, err := rg.ColumnChunk(c)
		if err != nil {
			return err
		}
		start := cc.DataPageOffset()
		if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 {
			start = min(start, cc.DictionaryPageOffset())
		}
		if lo < 0 || start < lo {
			lo = start
		}
		hi = max(hi, start+cc.TotalCompressedSize())
	}
	if lo < 0 {
		return nil
	}
	var sum uint32
	buf := make([]byte, 1<<20)
	for off := lo; off < hi; {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), hi-off)], off)
		sum = crc32.Update(sum, castagnoli, buf[:n])
		off += int64(n)
		if err != nil && off < hi {
			return fmt.Errorf("reading bytes %d..%d for their checksum: %v", lo, hi, err)
		}
	}
	if sum != want {
		return fmt.Errorf("bytes %d..%d do not match their checksum (CRC-32C %08x, stored %08x): the file is damaged", lo, hi, sum, want)
	}
	return nil
}

func rowGroupBytes(md *metadata.FileMetaData, i int) int64 {
	rg := md.RowGroup(i)
	var n int64
	for c := range rg.NumColumns() {
		if cc, err := rg.ColumnChunk(c); err == nil {
			n += cc.TotalCompressedSize()
		}
	}
	return n
}

// sliceRuns hands out rec in runs of at most rows rows (zero-copy slices).
func sliceRuns(rec arrow.RecordBatch, bytes int64, rows int, each func(loaded) error) error {
	n := rec.NumRows()
	if n <= int64(rows) {
		rec.Retain()
		return each(loaded{recs: []arrow.RecordBatch{rec}, bytes: bytes})
	}
	for lo := int64(0); lo < n; lo += int64(rows) {
		hi := min(lo+int64(rows), n)
		s := rec.NewSlice(lo, hi)
		if err := each(loaded{recs: []arrow.RecordBatch{s}, bytes: share(bytes, hi, n) - share(bytes, lo, n)}); err != nil {
			return err
		}
	}
	return nil
}

// arrowPieces reads the record batches of an IPC file; RecordBatchAt is safe
// for concurrent use.
func arrowPieces(f stream.File, t *table) (split func(context.Context, func(piece, int64) bool) error, load loader, unmap func(), err error) {
	// Map the file so record batches point into the page cache instead of
	// being copied into fresh buffers (profiled: read syscalls, zeroing and
	// copying were ~40% of a pass). The mapping ends with the pass; batches
	// handed out are copies. Falls back to ReadAt where mmap fails.
	var r *ipc.FileReader
	var mapped []byte
	if data, err := mmap.Map(f, int(t.size)); err == nil {
		err = guard(func() (err error) {
			if len(data) < ipcFooterTail {
				return errors.New("file too small for an Arrow IPC footer")
			}
			if err := checkIPCFile(bytes.NewReader(data), int64(len(data))); err != nil {
				return err
			}
			r, err = ipc.NewMappedFileReader(data)
			return err
		})
		if err != nil {
			mmap.Unmap(data)
			return nil, nil, nil, err
		}
		mapped = data
		unmap = func() { mmap.Unmap(data) }
	} else if r, err = openIPCFile(f, t.size); err != nil {
		return nil, nil, nil, err
	}
	n := r.NumRecords()
	per := t.size / int64(max(n, 1))
	mark := &decodedMark{mapped: mapped, blocks: t.blocks, finished: make([]bool, n), low: t.lo}
	var at io.ReaderAt = f
	if mapped != nil {
		at = bytes.NewReader(mapped)
	}
	load = func(ctx context.Context, p piece, rows runRows, each func(loaded) error) error {
		if err := checkBlock(at, t.blocks, t.blocksErr, p.idx); err != nil {
			return err
		}
		rec, err := r.RecordBatchAt(p.idx)
		if err != nil {
			return err
		}
		defer rec.Release()
		if err := sliceRuns(rec, per, rows(rec.NumRows(), recordValues(rec)), each); err != nil {
			return err
		}
		dropPages(mapped, rec)
		mark.decoded(p.idx)
		return nil
	}
	return emitRange(t.lo, min(t.hi, n)), load, unmap, nil
}

// dropPages takes the pages of the mapping that hold only rec's buffers out
// of the process's resident set once rec is decoded (its data has been
// copied): the page cache keeps them, but the pass's RSS no longer grows
// with the file. Pages shared with a neighbouring record batch are kept.
func dropPages(mapped []byte, rec arrow.RecordBatch) {
	if len(mapped) == 0 {
		return
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(mapped)))
	lo, hi := uintptr(len(mapped)), uintptr(0)
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b == nil || b.Len() == 0 {
				continue
			}
			at := uintptr(unsafe.Pointer(unsafe.SliceData(b.Bytes()))) - base
			if at < uintptr(len(mapped)) {
				lo, hi = min(lo, at), max(hi, at+uintptr(b.Len()))
			}
		}
		for _, c := range d.Children() {
			walk(c)
		}
	}
	for _, c := range rec.Columns() {
		walk(c.Data())
	}
	page := uintptr(mmap.PageSize)
	lo, hi = (lo+page-1)/page*page, min(hi, uintptr(len(mapped)))/page*page
	if lo < hi {
		mmap.Drop(mapped[lo:hi])
	}
}

// decodedMark drops the pages of a mapped IPC file below the first record
// batch not yet decoded. dropPages leaves what lies outside a record's
// buffers: its header, the pages it shares with its neighbours, and the
// pages the kernel maps around a fault (whole folios), which a later
// record's header read maps in again after its neighbour dropped them. Once
// every record before the first unfinished one is decoded, nobody reads the
// file below that record's block: all of it goes, so pages left behind do
// not pile up with the length of the file. Safe for concurrent use.
type decodedMark struct {
	mu        sync.Mutex
	mapped    []byte
	blocks    []ipcBlock // from the table (nil when unreadable: nothing is dropped here)
	finished  []bool
	low       int // the first record not decoded
	droppedTo int64
}

// decoded notes that record i is decoded and drops what no record needs.
func (m *decodedMark) decoded(i int) {
	n := len(m.finished)
	if len(m.mapped) == 0 || len(m.blocks) != n {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.finished[i] = true
	for m.low < n && m.finished[m.low] {
		m.low++
	}
	end := int64(len(m.mapped))
	if m.low < n {
		// min: the blocks were read when the table was opened.
		end = min(m.blocks[m.low].offset, end)
	}
	page := int64(mmap.PageSize)
	end = end / page * page
	if end > m.droppedTo {
		mmap.Drop(m.mapped[m.droppedTo:end])
		m.droppedTo = end
	}
}

// recWithBytes carries the stream bytes a record batch took.
type recWithBytes struct {
	arrow.RecordBatch
	bytes int64
}

// streamPieces reads an IPC stream sequentially in the splitter, each record
// batch counted against the pass's budget until it is decoded, and hands the
// batches to the workers for conversion.
func streamPieces(f stream.File, t *table) (func(context.Context, func(piece, int64) bool) error, loader, error) {
	cr := &stream.CountingReader{R: f}
	// Record batch bodies go back to a pool when a batch is released, so a
	// pass reuses a few bodies instead of allocating one per batch (a steady
	// stream of garbage that made a long pass's heap climb higher than a
	// short one's).
	r, err := newStreamReader(cr, t.size, ipc.WithAllocator(&bufPool{}))
	if err != nil {
		return nil, nil, err
	}
	split := func(ctx context.Context, emit func(piece, int64) bool) error {
		defer r.Release()
		last := cr.N
		for i := 0; ; i++ {
			var ok bool
			err := guard(func() error { ok = r.Next(); return nil })
			if err != nil {
				return corrupt(t.path, fmt.Errorf("record batch %d: %w", i, err))
			}
			if !ok {
				if err := r.Err(); err != nil && err != io.EOF {
					return corrupt(t.path, fmt.Errorf("record batch %d: %w", i, err))
				}
				return nil
			}
			rec := r.RecordBatch()
			rec.Retain()
			by := cr.N - last
			last = cr.N
			if !emit(piece{idx: i, rec: recWithBytes{rec, by}}, by) {
				rec.Release()
				return nil
			}
		}
	}
	load := func(ctx context.Context, p piece, rows runRows, each func(loaded) error) error {
		rb := p.rec.(recWithBytes)
		defer rb.Release()
		return sliceRuns(rb.RecordBatch, rb.bytes, rows(rb.NumRows(), recordValues(rb.RecordBatch)), each)
	}
	return split, load, nil
}
