package delimited

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/streamfit/streamfit/stream"
)

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// rowsOf reads one pass: the rows and the ids.
func rowsOf(t *testing.T, src stream.DenseSource) ([][]float64, []int64, error) {
	t.Helper()
	var rows [][]float64
	var ids []int64
	for b, err := range src.Rows(context.Background()) {
		if err != nil {
			return rows, ids, err
		}
		if b.Start != int64(len(rows)) {
			t.Fatalf("batch starts at %d after %d rows", b.Start, len(rows))
		}
		for i := range b.Rows {
			rows = append(rows, append([]float64(nil), b.Row(i)...))
		}
		ids = append(ids, b.Group...)
		b.Release()
	}
	return rows, ids, nil
}

// What pandas writes (an unnamed index, a label column) reads as its
// numeric columns, with a warning naming those left out; --columns picks
// others, in its order; the id column comes as the group; TSV and gzip
// read alike; stream.OpenDense finds the format from the name.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	csv := "\ufeff,a,label,b,seq\n0,1.5,cat,-2,7\n1,1e3,dog,0.25,7\n2,\"3\",cat, 4 ,8\n"
	var warned []string
	o := stream.Options{GroupColumn: "seq", Warn: stream.NewWarner(func(m string) { warned = append(warned, m) })}
	want := "[[1.5 -2] [1000 0.25] [3 4]]"
	p := write(t, dir, "pandas.csv", csv)
	for _, batch := range []int{0, 1, 2} {
		o.BatchRows = batch
		src, err := stream.OpenDense(p, o)
		if err != nil {
			t.Fatal(err)
		}
		if info := src.Info(); info.Format != FormatCSV || info.Cols != 2 || info.Schema != "a, b" {
			t.Fatalf("info %+v", info)
		}
		rows, ids, err := rowsOf(t, src)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(rows) != want || fmt.Sprint(ids) != "[7 7 8]" {
			t.Fatalf("batch %d: rows %v ids %v", batch, rows, ids)
		}
	}
	if len(warned) == 0 || !strings.Contains(warned[0], `"label"`) || !strings.Contains(warned[0], "unnamed index") {
		t.Fatalf("warnings %q", warned)
	}
	src, err := stream.OpenDense(p, stream.Options{Columns: []string{"b", ""}})
	if err != nil {
		t.Fatal(err)
	}
	if rows, ids, err := rowsOf(t, src); err != nil || fmt.Sprint(rows) != "[[-2 0] [0.25 1] [4 2]]" || ids != nil {
		t.Fatalf("columns b and the index: %v %v %v", rows, ids, err)
	}
	tsv := strings.ReplaceAll(strings.ReplaceAll(csv, ",", "\t"), "\"3\"", "3")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(tsv))
	zw.Close()
	p = write(t, dir, "x.tsv.gz", gz.String())
	if src, err = stream.OpenDense(p, stream.Options{GroupColumn: "seq"}); err != nil {
		t.Fatal(err)
	}
	if rows, ids, err := rowsOf(t, src); err != nil || fmt.Sprint(rows) != want || fmt.Sprint(ids) != "[7 7 8]" || src.Info().Format != FormatTSV {
		t.Fatalf("gzipped TSV: %v %v %v", rows, ids, err)
	}
}

// Bad values and lines are errors naming the file, the line, the row
// and the column; a file without numbers is refused at open.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, text string
		o          stream.Options
		kind       error
		want       string
		atOpen     bool
		line, row  int64
		column     string
	}{
		{name: "word", text: "a,b\n1,2\n3,x\n", kind: stream.ErrValue, want: `"x" is not a number`, line: 3, row: 1, column: "b"},
		{name: "empty", text: "a,b\n1,2\n3,4\n,5\n", kind: stream.ErrValue, want: "empty value", line: 4, row: 2, column: "a"},
		{name: "nan", text: "a,b\n1,NaN\n", kind: stream.ErrValue, want: "finite", line: 2, row: 0, column: "b"},
		{name: "inf", text: "a,b\n1,2\n-inf,2\n", kind: stream.ErrValue, want: "finite", line: 3, row: 1, column: "a"},
		{name: "huge", text: "a,b\n1,1e999\n", kind: stream.ErrValue, want: "finite", line: 2, row: 0, column: "b"},
		{name: "fields", text: "a,b\n1,2\n3,4,5\n", kind: stream.ErrSchema, want: "number of fields", line: 3, row: -1},
		{name: "id", text: "a,s\n1,2\n3,2.5\n", o: stream.Options{GroupColumn: "s"}, kind: stream.ErrValue, want: "not an integer", line: 3, row: 1, column: "s"},
		{name: "no id column", text: "a,b\n1,2\n", o: stream.Options{GroupColumn: "s"}, kind: stream.ErrSchema, want: "no id column", atOpen: true, line: 1, row: -1, column: "s"},
		{name: "no column", text: "a,b\n1,2\n", o: stream.Options{Columns: []string{"c"}}, kind: stream.ErrSchema, want: "the header has a, b", atOpen: true, line: 1, row: -1, column: "c"},
		{name: "no numbers", text: "a,b\nx,y\n", kind: stream.ErrSchema, want: "no numeric column", atOpen: true, line: 2, row: -1},
		{name: "twice", text: "a,a\n1,2\n", kind: stream.ErrSchema, want: "twice", atOpen: true, line: 1, row: -1, column: "a"},
		{name: "nothing", text: "\n", kind: stream.ErrEmpty, want: "no header", atOpen: true, row: -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := write(t, dir, "bad.csv", c.text)
			src, err := Open(p, ',', c.o)
			if err == nil {
				if c.atOpen {
					t.Fatal("opened")
				}
				_, _, err = rowsOf(t, src)
			} else if !c.atOpen {
				t.Fatalf("refused at open: %v", err)
			}
			var se *stream.Error
			if !errors.As(err, &se) || !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.want) || se.Path != p {
				t.Fatalf("error %v, want %v with %q", err, c.kind, c.want)
			}
			if se.Line != c.line || se.Row != c.row || se.Column != c.column {
				t.Fatalf("at line %d row %d column %q, want %d %d %q: %v", se.Line, se.Row, se.Column, c.line, c.row, c.column, err)
			}
		})
	}
}

// A pass holds a batch, not the file: the live heap during a pass over a
// hundred times more rows is about the same. (encoding/csv allocates a
// string per line, garbage at once, so allocation itself grows.)
func TestMemoryBounded(t *testing.T) {
	dir := t.TempDir()
	peak := func(n int) uint64 {
		var b strings.Builder
		b.WriteString("x,y,z\n")
		for i := range n {
			fmt.Fprintf(&b, "%d,%d.5,-%d\n", i%100, i%7, i%13)
		}
		p := write(t, dir, fmt.Sprintf("m%d.csv", n), b.String())
		b.Reset()
		src, err := Open(p, ',', stream.Options{BatchRows: 1024})
		if err != nil {
			t.Fatal(err)
		}
		var ms runtime.MemStats
		top, rows, batches := uint64(0), 0, 0
		for b, err := range src.Rows(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			rows += b.Rows
			if batches++; batches%16 == 1 {
				runtime.GC()
				runtime.ReadMemStats(&ms)
				top = max(top, ms.HeapAlloc)
			}
			b.Release()
		}
		if rows != n {
			t.Fatalf("%d rows of %d", rows, n)
		}
		return top
	}
	runtime.GC()
	small, large := peak(2000), peak(200000)
	t.Logf("live heap %d and %d bytes", small, large)
	// 200k rows are 4.8 MB as float64 (2.4 MB of text): a pass that held
	// them would show it.
	if large > small+1<<20 {
		t.Fatalf("a pass over 200000 rows held %d bytes, over 2000 rows %d", large, small)
	}
}
