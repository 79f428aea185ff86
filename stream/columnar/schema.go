package columnar

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamfit/streamfit/stream"
)

// Schema metadata keys written by the writers and read back into stream.Info.
const (
	MetaTerms = "streamfit.terms"
	MetaVocab = "streamfit.vocab"
	MetaGroup = "streamfit.group"
)

// Document layouts (stream.Info.Layout).
const (
	LayoutLists = "lists"
	LayoutPairs = "pairs"
	LayoutLong  = "long"
	LayoutText  = "text"
	// LayoutVector is a column of Spark ML vectors (the features column
	// CountVectorizer writes): struct<type, size, indices, values>, sparse
	// rows (type 0) holding the term ids in indices and the counts in
	// values, dense rows (type 1) a count per term id in values.
	LayoutVector = "vector"
)

// docSchema is the document layout found in a schema and the columns it uses.
type docSchema struct {
	layout string
	// cols are the top-level columns read: terms[, counts] for lists; terms for
	// pairs; doc, term, count for long; text for text.
	cols []string
	// term and count name the struct fields of the pairs layout.
	term, count string
}

func isInt(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}

func isFloat(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return false
}

func isNumeric(t arrow.DataType) bool { return isInt(t) || isFloat(t) }

// listElem returns the element type of a list or large list, else nil.
func listElem(t arrow.DataType) arrow.DataType {
	switch lt := t.(type) {
	case *arrow.ListType:
		return lt.Elem()
	case *arrow.LargeListType:
		return lt.Elem()
	}
	return nil
}

func field(sc *arrow.Schema, name string) (arrow.Field, bool) {
	idx := sc.FieldIndices(name)
	if len(idx) == 0 {
		return arrow.Field{}, false
	}
	return sc.Field(idx[0]), true
}

func columnList(sc *arrow.Schema) string {
	parts := make([]string, sc.NumFields())
	for i, f := range sc.Fields() {
		parts[i] = f.Name + " " + f.Type.String()
	}
	return strings.Join(parts, ", ")
}

// schemaString describes a schema on one line: its columns and its
// metadata keys, with long values (the vocabulary) elided.
func schemaString(sc *arrow.Schema) string {
	s := columnList(sc)
	md := sc.Metadata()
	if md.Len() == 0 {
		return s
	}
	parts := make([]string, md.Len())
	for i, k := range md.Keys() {
		v := md.Values()[i]
		switch {
		case k == MetaVocab:
			v = fmt.Sprintf("<%d words>", strings.Count(v, "\n")+1)
		case len(v) > 40:
			v = fmt.Sprintf("<%d bytes>", len(v))
		}
		parts[i] = k + "=" + v
	}
	return s + "; metadata: " + strings.Join(parts, ", ")
}

func schemaErr(path, col string, sc *arrow.Schema, format string, args ...any) error {
	return stream.Errorf(path, 0, -1, col, stream.ErrSchema, format+"; columns present: %s", append(args, columnList(sc))...)
}

// detectDocs finds the document layout of a schema from the column names in o.
func detectDocs(path string, sc *arrow.Schema, o stream.Options) (docSchema, error) {
	if tf, ok := field(sc, o.TermsColumn); ok {
		elem := listElem(tf.Type)
		switch {
		case elem == nil:
			return docSchema{}, schemaErr(path, o.TermsColumn, sc, "column %q has type %s, want list<int> (lists layout) or list<struct<term,count>> (pairs layout)", o.TermsColumn, tf.Type)
		case elem.ID() == arrow.STRUCT:
			st := elem.(*arrow.StructType)
			ds := docSchema{layout: LayoutPairs, cols: []string{o.TermsColumn}, term: o.TermColumn, count: o.CountColumn}
			// Fall back to the struct's first two fields when they have other names.
			if _, ok := st.FieldByName(ds.term); !ok && st.NumFields() == 2 {
				ds.term, ds.count = st.Field(0).Name, st.Field(1).Name
			}
			tsf, ok1 := st.FieldByName(ds.term)
			csf, ok2 := st.FieldByName(ds.count)
			if !ok1 || !ok2 || !isInt(tsf.Type) || !isNumeric(csf.Type) {
				return docSchema{}, schemaErr(path, o.TermsColumn, sc, "column %q has type %s, want list<struct<%s:int, %s:int>>", o.TermsColumn, tf.Type, o.TermColumn, o.CountColumn)
			}
			return ds, nil
		case !isInt(elem):
			return docSchema{}, schemaErr(path, o.TermsColumn, sc, "column %q has type %s, want a list of integer term ids", o.TermsColumn, tf.Type)
		}
		cf, ok := field(sc, o.CountsColumn)
		if !ok {
			return docSchema{}, schemaErr(path, o.CountsColumn, sc, "missing column %q (counts of the lists layout)", o.CountsColumn)
		}
		if ce := listElem(cf.Type); ce == nil || !isNumeric(ce) {
			return docSchema{}, schemaErr(path, o.CountsColumn, sc, "column %q has type %s, want list<int> or list<float> of integral counts", o.CountsColumn, cf.Type)
		}
		return docSchema{layout: LayoutLists, cols: []string{o.TermsColumn, o.CountsColumn}}, nil
	}
	if vf, ok := field(sc, o.VectorColumn); ok {
		if !isVector(vf.Type) {
			return docSchema{}, schemaErr(path, o.VectorColumn, sc, "column %q has type %s, want a Spark ML vector struct<type:int8, size:int32, indices:list<int32>, values:list<double>>", o.VectorColumn, vf.Type)
		}
		return docSchema{layout: LayoutVector, cols: []string{o.VectorColumn}}, nil
	}
	df, hasDoc := field(sc, o.DocColumn)
	tf, hasTerm := field(sc, o.TermColumn)
	cf, hasCount := field(sc, o.CountColumn)
	if hasDoc || hasTerm || hasCount {
		for _, c := range []struct {
			name string
			ok   bool
			f    arrow.Field
			kind func(arrow.DataType) bool
			want string
		}{{o.DocColumn, hasDoc, df, isInt, "int"}, {o.TermColumn, hasTerm, tf, isInt, "int"}, {o.CountColumn, hasCount, cf, isNumeric, "int or float"}} {
			if !c.ok {
				return docSchema{}, schemaErr(path, c.name, sc, "missing column %q of the long (%s, %s, %s) layout", c.name, o.DocColumn, o.TermColumn, o.CountColumn)
			}
			if !c.kind(c.f.Type) {
				return docSchema{}, schemaErr(path, c.name, sc, "column %q has type %s, want %s", c.name, c.f.Type, c.want)
			}
		}
		return docSchema{layout: LayoutLong, cols: []string{o.DocColumn, o.TermColumn, o.CountColumn}}, nil
	}
	if xf, ok := field(sc, o.TextColumn); ok {
		if xf.Type.ID() != arrow.STRING && xf.Type.ID() != arrow.LARGE_STRING {
			return docSchema{}, schemaErr(path, o.TextColumn, sc, "column %q has type %s, want string", o.TextColumn, xf.Type)
		}
		return docSchema{layout: LayoutText, cols: []string{o.TextColumn}}, nil
	}
	return docSchema{}, schemaErr(path, "", sc, "no document columns: want %q and %q (lists), %q as list<struct> (pairs), %q as Spark ML vectors (vector), %q, %q and %q (long) or %q (text)",
		o.TermsColumn, o.CountsColumn, o.TermsColumn, o.VectorColumn, o.DocColumn, o.TermColumn, o.CountColumn, o.TextColumn)
}

// isVector reports whether t is Spark ML's vector type: a struct with an
// integer type, a list of integer indices and a list of numeric values.
func isVector(t arrow.DataType) bool {
	st, ok := t.(*arrow.StructType)
	if !ok {
		return false
	}
	tf, ok1 := st.FieldByName("type")
	inf, ok2 := st.FieldByName("indices")
	vf, ok3 := st.FieldByName("values")
	if !ok1 || !ok2 || !ok3 || !isInt(tf.Type) {
		return false
	}
	ie, ve := listElem(inf.Type), listElem(vf.Type)
	return ie != nil && isInt(ie) && ve != nil && isNumeric(ve)
}

// metaValue looks a key up in the schema metadata.
func metaValue(sc *arrow.Schema, key string) (string, bool) {
	md := sc.Metadata()
	i := md.FindKey(key)
	if i < 0 {
		return "", false
	}
	return md.Values()[i], true
}

// vocabInfo fills Terms and Vocab from, in order of precedence, o.VocabPath,
// the schema metadata and o.Terms.
func vocabInfo(path string, sc *arrow.Schema, o stream.Options, info *stream.Info) error {
	if o.VocabPath != "" {
		v, err := stream.ReadVocab(o.VocabPath)
		if err != nil {
			return err
		}
		info.Vocab, info.Terms = v, len(v)
		return nil
	}
	if s, ok := metaValue(sc, MetaVocab); ok && s != "" {
		info.Vocab = strings.Split(s, "\n")
		info.Terms = len(info.Vocab)
	}
	if s, ok := metaValue(sc, MetaTerms); ok && info.Terms == 0 {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return stream.Errorf(path, 0, -1, "", stream.ErrCorrupt, "metadata %s=%q is not a vocabulary size", MetaTerms, s)
		}
		info.Terms = n
	}
	if info.Terms == 0 && o.Terms > 0 {
		info.Terms = o.Terms
	}
	return nil
}

// schemaWithMeta returns fields as a schema carrying the vocabulary metadata.
func schemaWithMeta(fields []arrow.Field, terms int, vocab []string, extra map[string]string) *arrow.Schema {
	var keys, vals []string
	if terms > 0 || vocab != nil {
		keys = append(keys, MetaTerms)
		vals = append(vals, strconv.Itoa(max(terms, len(vocab))))
	}
	if vocab != nil {
		keys = append(keys, MetaVocab)
		vals = append(vals, strings.Join(vocab, "\n"))
	}
	for k, v := range extra {
		keys = append(keys, k)
		vals = append(vals, v)
	}
	md := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema(fields, &md)
}
