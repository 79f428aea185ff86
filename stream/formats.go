package stream

import (
	core "github.com/streamfit/streamfit/internal/stream"

	// The built-in formats register themselves with the registry when they
	// are linked in; importing them here makes every one of them known
	// wherever Open is reachable.
	_ "github.com/streamfit/streamfit/stream/columnar"
	_ "github.com/streamfit/streamfit/stream/delimited"
	_ "github.com/streamfit/streamfit/stream/docword"
	_ "github.com/streamfit/streamfit/stream/ndarray"
	_ "github.com/streamfit/streamfit/stream/npz"
	_ "github.com/streamfit/streamfit/stream/text"
)

// Format is a file format the data layer can read or write: its name, how it
// recognises a file, and the openers and creators it supports. The built-in
// formats ("docword", "parquet", "arrow", "arrow-stream", "dataset", "npz",
// "npy", "csv", "tsv", "text-lines", "text-dir") are always registered;
// Register adds others.
type Format = core.Format

// Register makes a format available to Open, OpenDense, OpenText and Create.
// It panics if the name is taken, like database/sql.Register.
func Register(f Format) { core.Register(f) }

// Formats lists the registered format names, sorted.
func Formats() []string { return core.Formats() }

// Detect picks the format of an existing file or directory: the forced name if
// given, else the registered format most sure it matches (content beats name).
func Detect(path, forced string) (Format, error) { return core.Detect(path, forced) }

// Open opens a file (or a directory of text files) as a document source; the
// format comes from o.Format, else from the file's content and name. Raw text
// (a text column, a directory of files, one document per line) is tokenized
// against the vocabulary file o.VocabPath.
func Open(path string, o Options) (DocSource, error) { return core.Open(path, o) }

// OpenDense opens a file as a source of dense sample rows.
func OpenDense(path string, o Options) (DenseSource, error) { return core.OpenDense(path, o) }

// OpenText opens a file or directory as a source of raw text documents.
func OpenText(path string, o Options) (TextSource, error) { return core.OpenText(path, o) }

// Create opens a writer of documents; the format comes from o.Format or the name.
func Create(path string, o WriteOptions) (DocWriter, error) { return core.Create(path, o) }

// CreateDense opens a writer of dense rows; the format comes from o.Format or the name.
func CreateDense(path string, o WriteOptions) (DenseWriter, error) {
	return core.CreateDense(path, o)
}

// ErrIsText is returned (wrapped) by a format's OpenDocs when the file holds raw
// text rather than bag-of-words documents; Open then tokenizes it.
var ErrIsText = core.ErrIsText

// ErrNeedVocab is returned by Open for raw text input without Options.VocabPath.
var ErrNeedVocab = core.ErrNeedVocab
