package columnar

import (
	"context"
	"iter"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamfit/streamfit/stream"
)

// textSource is a stream.TextSource over a string column.
type textSource struct {
	t    *table
	col  string
	o    stream.Options
	info stream.Info
}

// openTexts opens the raw text column of path (Options.TextColumn).
func openTexts(path string, k kind, o stream.Options) (stream.TextSource, error) {
	o = o.WithDefaults()
	t, err := openTable(path, k)
	if err != nil {
		return nil, err
	}
	f, ok := field(t.schema, o.TextColumn)
	if !ok {
		return nil, schemaErr(path, o.TextColumn, t.schema, "missing text column %q", o.TextColumn)
	}
	if id := f.Type.ID(); id != arrow.STRING && id != arrow.LARGE_STRING {
		return nil, schemaErr(path, o.TextColumn, t.schema, "column %q has type %s, want string", o.TextColumn, f.Type)
	}
	info := stream.Info{Path: path, Format: k.String(), Layout: LayoutText, Rows: t.rows, NNZ: -1, Bytes: t.size, Schema: schemaString(t.schema), Checksum: t.checksum()}
	if err := vocabInfo(path, t.schema, o, &info); err != nil {
		return nil, err
	}
	return &textSource{t: t, col: o.TextColumn, o: o, info: info}, nil
}

// Info describes the table.
func (s *textSource) Info() stream.Info { return s.info }

type textPart struct {
	batches []*stream.Texts
	rows    int64
}

// size is the memory the part's strings hold.
func (p textPart) size() int64 {
	var n int64
	for _, b := range p.batches {
		for _, t := range b.Text {
			n += int64(len(t)) + 16
		}
	}
	return n
}

// Texts runs one pass over the text column; null values are empty documents.
func (s *textSource) Texts(ctx context.Context) iter.Seq2[*stream.Texts, error] {
	return func(yield func(*stream.Texts, error) bool) {
		decode := func(l loaded) (textPart, error) {
			var p textPart
			var cur *stream.Texts
			for _, rec := range l.recs {
				a := column(rec, s.col)
				for i := range a.Len() {
					if cur == nil || len(cur.Text) >= s.o.BatchRows {
						cur = &stream.Texts{Start: p.rows, Text: make([]string, 0, s.o.BatchRows)}
						p.batches = append(p.batches, cur)
					}
					var v string
					if !a.IsNull(i) {
						switch x := a.(type) {
						case *array.String:
							v = x.Value(i)
						case *array.LargeString:
							v = x.Value(i)
						}
					}
					// Copy: the record's buffers are released after decoding.
					cur.Text = append(cur.Text, strings.Clone(v))
					p.rows++
				}
			}
			return p, nil
		}
		var base int64
		for p, err := range pass(ctx, s.t, s.o, []string{s.col}, fixedRows(s.o.BatchRows), nil, decode, textPart.size, nil) {
			if err != nil {
				yield(nil, shift(err, base))
				return
			}
			for _, b := range p.batches {
				b.Start += base
				s.o.Progress.Add(int64(len(b.Text)), 0)
				if !yield(b, nil) {
					return
				}
			}
			base += p.rows
		}
	}
}
