// Package stream owns streamfit's data layer: the batch types every pass works
// on (sparse documents in CSR form, dense sample rows with optional group ids),
// the sources that decode them from files (UCI docword, Parquet, Arrow IPC,
// NumPy, CSV, raw text with a vocabulary), the writers that produce those
// files, the options, errors and progress reporting they share, the format
// registry, and the ordered parallel pipelines that passes run on.
//
// A source can be read any number of times; each call to its iterator is one
// pass over the data, decoded in parallel with bounded memory and delivered in
// order:
//
//	for b, err := range src.Docs(ctx) {
//		if err != nil { return err }
//		use(b)
//		b.Release() // optional: lets the source reuse the batch's memory
//	}
//
// Open, OpenDense, OpenText and Create find a file's format in the registry.
// The built-in formats live in their own packages (stream/docword,
// stream/columnar, stream/text, stream/npz, stream/ndarray,
// stream/delimited), which hold their format-specific options and tools and
// register themselves when linked in: every model package links all of them,
// and a program using only this package imports stream/formats. The package
// knows nothing about models.
package stream
