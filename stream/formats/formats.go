// Package formats links every built-in file format into a program: docword,
// parquet, arrow, arrow-stream, dataset, npz, npy, csv, tsv, text-lines and
// text-dir. Each format package registers itself with package stream when it
// is linked in, and stream cannot import them (they are built on its types),
// so a program that calls stream.Open without a model package imports this
// one for its side effect:
//
//	import _ "github.com/streamfit/streamfit/stream/formats"
//
// Package models imports it, so every model package brings all the formats.
package formats

import (
	_ "github.com/streamfit/streamfit/stream/columnar"
	_ "github.com/streamfit/streamfit/stream/delimited"
	_ "github.com/streamfit/streamfit/stream/docword"
	_ "github.com/streamfit/streamfit/stream/ndarray"
	_ "github.com/streamfit/streamfit/stream/npz"
	_ "github.com/streamfit/streamfit/stream/text"
)
