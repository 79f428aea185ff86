// Package columnar reads and writes streamfit's columnar formats: Parquet
// ("parquet"), Arrow IPC files ("arrow") and Arrow IPC streams ("arrow-stream"),
// and reads a directory of such files as one input ("dataset": the parts
// Spark, DuckDB, pandas and Arrow write a large table as). It registers the
// formats with the stream registry, through which stream.Open,
// stream.OpenDense and stream.Create handle such files.
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
// Parquet row groups and Arrow IPC record batches are decoded by
// Options.Workers goroutines, each in runs of at most Options.BatchRows rows
// (dense rows: also at most Options.BatchBytes; documents of the lists,
// pairs and vector layouts: Options.RunRows of the piece's rows and
// entries, from the Parquet footer or the record batch, so that every
// route through the file cuts a piece alike), and delivered in file order
// through stream.OrderedBudget: decoded data waiting for the consumer is
// bounded by Options.InflightBytes, not by the size of the writer's row groups.
// Parquet column chunks are read page by page; the lists and pairs layouts
// are decoded from the repetition and definition levels (parquet_lists.go),
// INT32 leaves straight from their pages (parquet_pages.go) so that a pass
// allocates next to nothing once warm, the others through pqarrow's record
// reader. Page buffers come from a per-pass pool (bufpool.go). IPC files are memory-mapped;
// an IPC stream is read a record batch at a time, so a stream's memory does
// include its largest record batch. The hot loops work on the raw value and
// offset slices of the typed Arrow arrays, never per element through an
// interface.
//
// Writers close a row group (record batch) at WriteOptions.RowGroupRows rows
// or, by default, at DefaultRowGroupBytes (DefaultIPCBatchBytes) of decoded
// data.
//
// A range of row groups (record batches of an IPC file) is opened with
// OpenPieces: only those pieces are read, and documents keep their index in
// the whole file, from the row counts in the Parquet footer or the record
// batch headers (ipc_blocks.go). Pieces lists them without decoding.
//
// The vocabulary size and words travel in the schema metadata (keys
// "streamfit.terms" and "streamfit.vocab"). Without them and without
// Options.VocabPath or Options.Terms, a Parquet file's term column statistics
// give the size; an Arrow file without metadata reports Info().Terms == 0 and
// term ids are then only checked to be non-negative.
package columnar
