package stream

import (
	"context"
	"iter"
)

// Info describes a source: what it is and what is known about it without a pass.
// Fields that are unknown before a full pass are zero (or -1 for Rows).
type Info struct {
	// Path is the file or directory the source reads; empty for in-memory sources.
	Path string `json:"path,omitempty"`
	// Format names the decoder: "docword", "parquet", "arrow", "arrow-stream",
	// "dataset", "npz", "npy", "csv", "tsv", "text-lines", "text-dir", "memory",
	// "generated".
	Format string `json:"format"`
	// Layout names the document shape inside the format: "lists", "pairs", "long",
	// "text" for documents; "fixed-list", "list", "columns", "array" for dense
	// rows.
	Layout string `json:"layout,omitempty"`
	// Terms is the vocabulary size d (0 when unknown).
	Terms int `json:"terms,omitempty"`
	// Vocab holds the words of the vocabulary when known (len Terms), else nil.
	Vocab []string `json:"-"`
	// Rows is the number of documents or sample rows, -1 when unknown.
	Rows int64 `json:"rows"`
	// NNZ is the number of stored (term, count) entries, -1 when unknown.
	NNZ int64 `json:"nnz"`
	// Bytes is the size of the input on disk (0 when not a file).
	Bytes int64 `json:"bytes,omitempty"`
	// Cols is the number of columns of a dense source.
	Cols int `json:"cols,omitempty"`
	// Schema is a human-readable description of the file's schema, when it has one.
	Schema string `json:"schema,omitempty"`
	// Checksum says what checks the stored bytes as they are read ("none"
	// when nothing does: damage that still decodes goes unnoticed), empty
	// when the format does not say.
	Checksum string `json:"checksum,omitempty"`
}

// DocSource is a re-readable stream of sparse documents. Each call to Docs is one
// full pass in document order; batches are decoded in parallel but delivered in
// order. Breaking out of the loop or cancelling ctx stops the pass promptly and
// releases its resources. The first error ends the pass.
type DocSource interface {
	Info() Info
	Docs(ctx context.Context) iter.Seq2[*Docs, error]
}

// DenseSource is a re-readable stream of dense sample rows, with the same pass
// semantics as DocSource.
type DenseSource interface {
	Info() Info
	Rows(ctx context.Context) iter.Seq2[*Dense, error]
}

// Texts is a batch of raw text documents; Start is the index of the first one.
type Texts struct {
	Start int64
	Text  []string
}

// TextSource is a re-readable stream of raw text documents (before tokenization).
type TextSource interface {
	Info() Info
	Texts(ctx context.Context) iter.Seq2[*Texts, error]
}

// Closer is implemented by sources holding open resources between passes.
type Closer interface{ Close() error }

// Close closes src if it holds resources; other sources are left alone.
func Close(src any) error {
	if c, ok := src.(Closer); ok {
		return c.Close()
	}
	return nil
}
