package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

func init() {
	register("topics", "print the top words of each topic of a fitted topic model", runTopics)
}

func runTopics(ctx context.Context, args []string) error {
	fs := newFlags("topics", "", "Prints each topic's weight and its most probable words (term ids when the model has no vocabulary and --vocab is not given).")
	modelPath := fs.String("model", "model.json", "fitted topic model")
	top := fs.Int("top", 10, "words per topic")
	vocabPath := fs.String("vocab", "", "vocabulary file, when the model does not carry one")
	if pos, err := parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	m, err := models.Read(*modelPath)
	if err != nil {
		return err
	}
	vocab := m.Vocab
	if *vocabPath != "" {
		if vocab, err = stream.ReadVocab(*vocabPath); err != nil {
			return err
		}
		if len(vocab) != m.D {
			return fmt.Errorf("%s has %d words but the model has d=%d", *vocabPath, len(vocab), m.D)
		}
	}
	printTopics(m, vocab, *top)
	return nil
}

// printTopics writes one line per topic: index, weight α (normalised), top words.
func printTopics(m *models.Model, vocab []string, top int) {
	var asum float64
	for _, a := range m.Alpha {
		asum += a
	}
	idx := make([]int, m.D)
	for t, row := range m.Topics {
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return row[idx[a]] > row[idx[b]] })
		fmt.Printf("topic %-3d weight %.3f:", t, m.Alpha[t]/asum)
		for _, w := range idx[:min(top, m.D)] {
			word := "#" + strconv.Itoa(w)
			if vocab != nil {
				word = vocab[w]
			}
			fmt.Printf(" %s", word)
		}
		fmt.Println()
	}
}

// writeTopicsParquet writes the topic matrix of m to path as Parquet
// (zstd), atomically: one row per topic, in the order of model.json,
//
//	topic int32          index of the topic (0 = largest weight)
//	alpha double         its Dirichlet parameter (weight for "topic")
//	probs list<double>   its d word probabilities, term id = position
//
// with key-value metadata streamfit.model, streamfit.k, streamfit.d,
// streamfit.alpha0 and, when the model knows it, streamfit.vocab (a JSON
// array of the d words).
func writeTopicsParquet(m *models.Model, path string) error {
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

	f, w, err := createParquet(path, schema)
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

// createParquet starts a zstd Parquet file of schema at a temporary name
// that Commit renames to path (Abort removes it).
func createParquet(path string, schema *arrow.Schema) (*stream.AtomicFile, *pqarrow.FileWriter, error) {
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
