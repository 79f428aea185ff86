// Package stream owns streamfit's data layer: the batch types every pass works on
// (sparse documents in CSR form, dense sample rows with optional group ids), the
// sources that decode them from files on disk (UCI docword, Parquet, Arrow IPC,
// raw text with a vocabulary, generated data with known truth), the writers that
// produce those files, and progress reporting.
//
// A source can be read any number of times; each call to its iterator is one pass
// over the data, decoded in parallel with bounded memory and delivered in order:
//
//	for b, err := range src.Docs(ctx) {
//		if err != nil { return err }
//		use(b)
//		b.Release() // optional: lets the source reuse the batch's memory
//	}
//
// Open, OpenDense, OpenText and Create know every built-in format (docword,
// parquet, arrow, arrow-stream, text-lines, text-dir) with no other import; the
// format packages (stream/docword, stream/columnar, stream/text) hold their
// format-specific options and tools. The package knows nothing about models.
package stream
