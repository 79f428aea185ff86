package models

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/streamfit/streamfit/stream"
)

// WriteTopicsParquet writes the topic matrix of m to path as Parquet (zstd),
// atomically: one row per topic, in the order of model.json,
//
//	topic int32          index of the topic (0 = largest weight)
//	alpha double         its Dirichlet parameter (weight for "topic")
//	probs list<double>   its d word probabilities, term id = position
//
// with key-value metadata streamfit.model, streamfit.k, streamfit.d,
// streamfit.alpha0 and, when the model knows it, streamfit.vocab (a JSON
// array of the d words). ReadTopicsParquet reads it back.
func WriteTopicsParquet(m *Model, path string) error {
	mem := memory.NewGoAllocator()
	meta := map[string]string{
		"streamfit.model":  m.Model,
		"streamfit.k":      strconv.Itoa(m.K),
		"streamfit.d":      strconv.Itoa(m.D),
		"streamfit.alpha0": strconv.FormatFloat(m.Alpha0, 'g', -1, 64),
	}
	if m.Vocab != nil {
		b, err := json.Marshal(m.Vocab)
		if err != nil {
			return err
		}
		meta["streamfit.vocab"] = string(b)
	}
	keys := slices.Sorted(maps.Keys(meta)) // a fixed order keeps the file deterministic
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = meta[k]
	}
	md := arrow.NewMetadata(keys, vals)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "topic", Type: arrow.PrimitiveTypes.Int32},
		{Name: "alpha", Type: arrow.PrimitiveTypes.Float64},
		{Name: "probs", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
	}, &md)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	topic := b.Field(0).(*array.Int32Builder)
	alpha := b.Field(1).(*array.Float64Builder)
	probs := b.Field(2).(*array.ListBuilder)
	vals64 := probs.ValueBuilder().(*array.Float64Builder)
	for i, row := range m.Topics {
		topic.Append(int32(i))
		alpha.Append(m.Alpha[i])
		probs.Append(true)
		vals64.AppendValues(row, nil)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()

	f, w, err := CreateParquet(path, schema)
	if err != nil {
		return err
	}
	err = w.Write(rec)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		f.Abort()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Commit()
}

// CreateParquet starts a zstd Parquet file of schema (stored in the file)
// at a temporary name that the returned file's Commit renames to path, once
// the writer is closed; Abort removes it.
func CreateParquet(path string, schema *arrow.Schema) (*stream.AtomicFile, *pqarrow.FileWriter, error) {
	f, err := stream.CreateAtomic(path)
	if err != nil {
		return nil, nil, err
	}
	// pqarrow closes a writer that is an io.Closer; the atomic file must stay
	// open until Commit, so it is handed over as a plain io.Writer.
	w, err := pqarrow.NewFileWriter(schema, struct{ io.Writer }{f},
		parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		f.Abort()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, w, nil
}

// TopicsTable is a topic matrix read from another file than model.json.
type TopicsTable struct {
	// Topics has one row per topic, as stored (not normalized).
	Topics [][]float64
	// Alpha holds the alpha column, nil when the file has none.
	Alpha []float64
	// Model and Vocab come from the streamfit.* metadata, when present.
	Model string
	Vocab []string
}

// ReadTopicsParquet reads a topic matrix in the layout WriteTopicsParquet
// writes: one row per topic with a probs list<double> (or list<float>)
// column, an optional alpha column, and optional streamfit.* metadata. Other
// tools may write the same layout; only probs is required.
func ReadTopicsParquet(path string) (*TopicsTable, error) {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer tbl.Release()
	out := &TopicsTable{}
	kv := pf.MetaData().KeyValueMetadata()
	if v := kv.FindValue("streamfit.model"); v != nil {
		out.Model = *v
	}
	if v := kv.FindValue("streamfit.vocab"); v != nil {
		if err := json.Unmarshal([]byte(*v), &out.Vocab); err != nil {
			return nil, fmt.Errorf("%s: metadata streamfit.vocab: %w", path, err)
		}
	}
	col := func(name string) *arrow.Chunked {
		if idx := tbl.Schema().FieldIndices(name); len(idx) == 1 {
			return tbl.Column(idx[0]).Data()
		}
		return nil
	}
	probs := col("probs")
	if probs == nil {
		return nil, fmt.Errorf("%s: no probs column (want one row per topic with probs list<double>)", path)
	}
	row := 0
	for _, ch := range probs.Chunks() {
		l, ok := ch.(*array.List)
		if !ok {
			return nil, fmt.Errorf("%s: column probs is %s, want list<double>", path, ch.DataType())
		}
		for i := range l.Len() {
			if l.IsNull(i) {
				return nil, fmt.Errorf("%s: row %d: probs is null", path, row)
			}
			lo, hi := l.ValueOffsets(i)
			vals := make([]float64, hi-lo)
			switch v := l.ListValues().(type) {
			case *array.Float64:
				for j := range vals {
					vals[j] = v.Value(int(lo) + j)
				}
			case *array.Float32:
				for j := range vals {
					vals[j] = float64(v.Value(int(lo) + j))
				}
			default:
				return nil, fmt.Errorf("%s: column probs holds %s, want double or float", path, v.DataType())
			}
			out.Topics = append(out.Topics, vals)
			row++
		}
	}
	if alpha := col("alpha"); alpha != nil {
		for _, ch := range alpha.Chunks() {
			a, ok := ch.(*array.Float64)
			if !ok {
				return nil, fmt.Errorf("%s: column alpha is %s, want double", path, ch.DataType())
			}
			for i := range a.Len() {
				if a.IsNull(i) {
					return nil, fmt.Errorf("%s: row %d: alpha is null", path, len(out.Alpha))
				}
				out.Alpha = append(out.Alpha, a.Value(i))
			}
		}
	}
	return out, nil
}
