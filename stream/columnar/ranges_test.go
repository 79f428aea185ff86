package columnar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/streamfit/streamfit/stream"
)

// batchSpan is where a batch sits in the file: its first document and length.
type batchSpan struct{ start, n int64 }

// collectSpans reads every batch of src, returning the documents and the
// batches' spans.
func collectSpans(t *testing.T, src stream.DocSource) (*stream.Docs, []batchSpan) {
	t.Helper()
	got := &stream.Docs{Offsets: []int{0}}
	var spans []batchSpan
	for b, err := range src.Docs(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		spans = append(spans, batchSpan{b.Start, int64(b.Len())})
		for i := range b.Len() {
			got.AppendDoc(b.Doc(i))
		}
		b.Release()
	}
	return got, spans
}

// sub returns documents [lo, hi) of docs.
func sub(docs *stream.Docs, lo, hi int) *stream.Docs {
	out := &stream.Docs{Offsets: []int{0}}
	for i := lo; i < hi; i++ {
		out.AppendDoc(docs.Doc(i))
	}
	return out
}

// Ranges of row groups (record batches) hold the documents of those pieces,
// numbered as in the whole file, in the very batches a pass over the whole
// file makes; the piece list agrees with the pieces as decoded. So too
// when the pieces are cut by entries (Options.BatchEntries) into batches
// larger than BatchRows: 2000 entries of documents of about 18 entries
// are about 108 rows, cut from each row group of 250 alike.
func TestPieceRanges(t *testing.T) {
	docs := corpus(3000, 300, 20, 21)
	for _, o := range []stream.Options{{BatchRows: 100, Workers: 2}, {BatchRows: 30, BatchEntries: 2000, Workers: 2}} {
		for _, k := range []kind{kindParquet, kindArrow} {
			for _, layout := range []string{LayoutLists, LayoutPairs} {
				for _, comp := range []string{"", "zstd"} {
					t.Run(fmt.Sprintf("%s/%s/%s/entries%d", k, layout, comp, o.BatchEntries), func(t *testing.T) { pieceRanges(t, docs, o, k, layout, comp) })
				}
			}
		}
	}
}

func pieceRanges(t *testing.T, docs *stream.Docs, o stream.Options, k kind, layout, comp string) {
	path := filepath.Join(t.TempDir(), "c"+exts[k])
	writeDocs(t, path, docs, stream.WriteOptions{Layout: layout, Terms: 300, RowGroupRows: 250, Compression: comp})
	pieces, err := Pieces(path, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := groupRows(t, path, k)
	var first int64
	for i, p := range pieces {
		if p.Index != i || p.FirstRow != first || p.Rows != int64(rows[i]) || p.Bytes <= 0 {
			t.Fatalf("piece %d: %+v; decoded: %d rows from row %d", i, p, rows[i], first)
		}
		first += p.Rows
	}
	if len(pieces) != len(rows) || len(pieces) != 12 {
		t.Fatalf("%d pieces listed, %d decoded, want 12", len(pieces), len(rows))
	}
	whole, err := stream.Open(path, o)
	if err != nil {
		t.Fatal(err)
	}
	_, all := collectSpans(t, whole)
	checkCut(t, all, o, 250)
	for _, r := range [][2]int{{0, 3}, {3, 8}, {8, -1}, {5, 6}, {0, -1}, {11, 12}} {
		src, err := OpenPieces(path, o, r[0], r[1])
		if err != nil {
			t.Fatal(err)
		}
		hi := r[1]
		if hi < 0 {
			hi = 12
		}
		lo, end := 250*r[0], 250*hi
		if got := src.DocRange(); got != [2]int64{int64(lo), int64(end)} || src.Info().Rows != int64(end-lo) {
			t.Errorf("range %v: documents %v, Info.Rows %d, want %d:%d", r, got, src.Info().Rows, lo, end)
		}
		got, spans := collectSpans(t, src)
		sameDocs(t, got, sub(docs, lo, end))
		// The whole file's batches from document lo to end.
		i := slices.IndexFunc(all, func(s batchSpan) bool { return s.start == int64(lo) })
		j := slices.IndexFunc(all, func(s batchSpan) bool { return s.start == int64(end) })
		if j < 0 {
			j = len(all)
		}
		if i < 0 || !slices.Equal(spans, all[i:j]) {
			t.Fatalf("range %v: batches %v, the whole file's %v", r, spans, all)
		}
	}
}

// checkCut checks the batches of a pass over pieces of per rows: within a
// piece all of one size but the last, BatchRows without BatchEntries, and
// between BatchRows (exclusive: the test's documents are short) and
// MaxBatchGrowth times it with it.
func checkCut(t *testing.T, spans []batchSpan, o stream.Options, per int64) {
	t.Helper()
	size := map[int64]int64{} // the size of each piece's first batch
	for _, s := range spans {
		p := s.start / per
		first, ok := size[p]
		if !ok {
			size[p], first = s.n, s.n
		}
		if s.n > first || s.n < first && (s.start+s.n)%per != 0 || s.start/per != (s.start+s.n-1)/per {
			t.Fatalf("batch %+v: the piece's first is %d rows; batches %v", s, first, spans)
		}
	}
	for p, n := range size {
		lo, hi := int64(o.BatchRows)+1, int64(o.BatchRows*stream.MaxBatchGrowth)
		if o.BatchEntries <= 0 {
			lo, hi = int64(o.BatchRows), int64(o.BatchRows)
		}
		if n < lo || n > hi {
			t.Errorf("piece %d: batches of %d rows, want %d..%d", p, n, lo, hi)
		}
	}
}

// A range does not decode the pieces outside it: pieces made unreadable
// before and after the range do not stop it, while a pass over the whole
// file fails on them. (The record batch headers before a range are read,
// for the document numbering; their bodies are not.)
func TestPieceRangeSkipsPieces(t *testing.T) {
	docs := corpus(3000, 300, 20, 22)
	for _, k := range []kind{kindParquet, kindArrow} {
		t.Run(k.String(), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "c"+exts[k])
			writeDocs(t, path, docs, stream.WriteOptions{Terms: 300, RowGroupRows: 250})
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// spoil overwrites the data of piece i.
			spoil := func(i int) {
				var lo, hi int64
				if k == kindParquet {
					r, err := file.OpenParquetFile(path, false)
					if err != nil {
						t.Fatal(err)
					}
					cc, err := r.MetaData().RowGroup(i).ColumnChunk(0)
					if err != nil {
						t.Fatal(err)
					}
					lo, hi = cc.DataPageOffset(), cc.DataPageOffset()+cc.TotalCompressedSize()
					r.Close()
				} else {
					f, err := os.Open(path)
					if err != nil {
						t.Fatal(err)
					}
					blocks, err := ipcBlocks(f, int64(len(data)))
					f.Close()
					if err != nil {
						t.Fatal(err)
					}
					b := blocks[i]
					lo, hi = b.offset+b.meta, b.offset+b.meta+b.body
					if i == len(blocks)-1 {
						lo = b.offset // the header too: not even read
					}
				}
				for j := lo; j < hi; j++ {
					data[j] = 0xff
				}
			}
			spoil(0)
			spoil(11)
			bad := filepath.Join(dir, "bad"+exts[k])
			if err := os.WriteFile(bad, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if src, err := stream.Open(bad, stream.Options{}); err == nil {
				if _, err = stream.Collect(context.Background(), src); err == nil {
					t.Fatal("the spoiled pieces read without error: the test proves nothing")
				}
			}
			src, err := OpenPieces(bad, stream.Options{Workers: 2}, 1, 11)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := collectSpans(t, src)
			sameDocs(t, got, sub(docs, 250, 2750))
		})
	}
}

// Ranges that cannot be read are refused with ErrRange, naming the file,
// the number of pieces and what to do instead.
func TestPieceRangeRefusals(t *testing.T) {
	docs := corpus(1000, 100, 10, 23)
	dir := t.TempDir()
	write := func(name, layout string) string {
		p := filepath.Join(dir, name)
		writeDocs(t, p, docs, stream.WriteOptions{Terms: 100, RowGroupRows: 250, Layout: layout})
		return p
	}
	pq, arrow := write("c.parquet", ""), write("c.arrow", "")
	cases := []struct {
		path       string
		first, end int
		want       string
	}{
		{pq, 4, -1, "row groups 4: are beyond the file's 4 row groups (0:4)"},
		{pq, 0, 5, "row groups 0:5 are beyond the file's 4 row groups"},
		{pq, -1, 2, "beyond the file's 4 row groups"},
		{pq, 2, 2, "row groups 2:2: an empty range"},
		{arrow, 3, 9, "record batches 3:9 are beyond the file's 4 record batches"},
		{write("c.arrows", ""), 0, 1, "Arrow IPC stream has no index"},
		{write("long.parquet", LayoutLong), 0, 1, "convert the file to the lists layout"},
	}
	for _, c := range cases {
		_, err := OpenPieces(c.path, stream.Options{}, c.first, c.end)
		if !errors.Is(err, ErrRange) || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %d:%d: %v, want ErrRange with %q", filepath.Base(c.path), c.first, c.end, err, c.want)
		}
	}
	if _, err := Pieces(filepath.Join(dir, "c.arrows"), stream.Options{}); !errors.Is(err, ErrRange) {
		t.Errorf("Pieces of an Arrow IPC stream: %v", err)
	}
}

// FuzzIPCBlocks feeds damaged Arrow IPC files to the footer and header
// reader: errors, never a panic.
func FuzzIPCBlocks(f *testing.F) {
	path := filepath.Join(f.TempDir(), "c.arrow")
	writeDocs(f, path, corpus(200, 50, 5, 24), stream.WriteOptions{RowGroupRows: 50})
	data, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data, uint(len(data)-20), byte(1))
	f.Add(data, uint(len(data)/2), byte(0x80))
	f.Fuzz(func(t *testing.T, data []byte, at uint, x byte) {
		if len(data) > 0 {
			data = slices.Clone(data)
			data[int(at%uint(len(data)))] ^= x
		}
		fh := bytes.NewReader(data)
		blocks, err := ipcBlocks(fh, int64(len(data)))
		if err != nil {
			return
		}
		for _, b := range blocks {
			if rows, err := ipcRows(fh, b); err == nil && rows < 0 {
				t.Fatalf("negative row count %d", rows)
			}
		}
	})
}

// A bad value in a range is reported at its document's index in the whole
// file.
func TestPieceRangeErrorRows(t *testing.T) {
	docs := corpus(3000, 300, 20, 25)
	dir := t.TempDir()
	voc := filepath.Join(dir, "vocab.txt")
	if err := os.WriteFile(voc, []byte(strings.Join(vocab(250), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, k := range []kind{kindParquet, kindArrow} {
		path := filepath.Join(dir, "c"+exts[k])
		writeDocs(t, path, docs, stream.WriteOptions{Terms: 300, RowGroupRows: 250})
		// The first document of the range 4:6 with a term beyond the 250 words.
		want := int64(-1)
		for i := 1000; i < 1500 && want < 0; i++ {
			if terms, _ := docs.Doc(i); slices.Max(append(terms, 0)) >= 250 {
				want = int64(i)
			}
		}
		if want < 1000 {
			t.Fatal("no document of the range has a term beyond the vocabulary")
		}
		src, err := OpenPieces(path, stream.Options{VocabPath: voc}, 4, 6)
		if err != nil {
			t.Fatal(err)
		}
		_, err = stream.Collect(context.Background(), src)
		var se *stream.Error
		if !errors.As(err, &se) || se.Row != want || !errors.Is(err, stream.ErrValue) {
			t.Errorf("%s: %v, want a bad term at row %d", k, err, want)
		}
	}
}
