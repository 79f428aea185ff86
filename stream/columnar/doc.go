// Package columnar reads and writes streamfit's columnar formats: Parquet
// ("parquet"), Arrow IPC files ("arrow") and Arrow IPC streams ("arrow-stream").
// It registers the three formats with package stream in init, so importing it
// (usually through stream/formats) is all a caller needs.
//
// Document tables come in four layouts, detected from the schema:
//
//   - lists: terms list<int> and counts list<int|float>, one row per document;
//   - pairs: terms list<struct<term:int, count:int>>, one row per document;
//   - long:  (doc, term, count) rows sorted by doc; a document may span row
//     groups or record batches; a row with a null term stores an empty document;
//   - text:  a string column of raw text, read through OpenTexts.
//
// Dense tables hold a fixed_size_list<float> or list<float> column, or a set of
// numeric columns, with an optional integer id column.
//
// Parquet row groups and Arrow IPC record batches are decoded by Options.Workers
// goroutines through stream.Ordered, so at most about 2×workers of them are in
// memory at once; batches come out in file order. The hot loops work on the raw
// value and offset slices of the typed Arrow arrays, never per element through
// an interface.
//
// The vocabulary size and words travel in the schema metadata (keys
// "streamfit.terms" and "streamfit.vocab"). Without them and without
// Options.VocabPath or Options.Terms, a Parquet file's term column statistics
// give the size; an Arrow file without metadata reports Info().Terms == 0 and
// term ids are then only checked to be non-negative.
package columnar
