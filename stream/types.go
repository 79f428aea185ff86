package stream

import (
	"context"

	core "github.com/streamfit/streamfit/internal/stream"
)

// Docs is a batch of sparse documents in compressed sparse row form: document
// i of the batch holds the distinct term ids Terms[Offsets[i]:Offsets[i+1]]
// with the matching non-negative Counts. Term ids are 0-based indices into the
// vocabulary. Calling Release hands its memory back to the source for reuse,
// after which it must not be touched.
type Docs = core.Docs

// Dense is a batch of dense sample rows: Rows × Cols float64 values in
// row-major order, with an optional integer id per row (a group, set or
// sequence id, as the model needs; rows of one sequence come in order).
type Dense = core.Dense

// Texts is a batch of raw text documents; Start is the index of the first one.
type Texts = core.Texts

// NewDocs returns an empty batch starting at document start, taken from a
// shared pool; Release returns it there.
func NewDocs(start int64) *Docs { return core.NewDocs(start) }

// NewDense returns an empty batch of rows with cols columns starting at row
// start, taken from a shared pool; Release returns it there.
func NewDense(start int64, cols int) *Dense { return core.NewDense(start, cols) }

// Info describes a source: what it is and what is known about it without a
// pass. Fields that are unknown before a full pass are zero (or -1 for Rows).
type Info = core.Info

// DocSource is a re-readable stream of sparse documents. Each call to Docs
// is one full pass in document order; batches are decoded in parallel but
// delivered in order. Breaking out of the loop or cancelling ctx stops the
// pass promptly and releases its resources. The first error ends the pass.
type DocSource = core.DocSource

// DenseSource is a re-readable stream of dense sample rows, with the same pass
// semantics as DocSource.
type DenseSource = core.DenseSource

// TextSource is a re-readable stream of raw text documents (before
// tokenization).
type TextSource = core.TextSource

// Closer is implemented by sources holding open resources between passes.
type Closer = core.Closer

// Close closes src if it holds resources; other sources are left alone.
func Close(src any) error { return core.Close(src) }

// MemoryDocs is a DocSource over documents held in memory, for tests and small
// corpora. Each pass yields copies in batches of BatchRows documents.
type MemoryDocs = core.MemoryDocs

// MemoryDense is a DenseSource over rows held in memory.
type MemoryDense = core.MemoryDense

// DocWriter writes document batches to a file. Nothing is visible at the final
// path until Close succeeds; Abort (or a failed Close) removes the temporary
// file.
type DocWriter = core.DocWriter

// DenseWriter writes dense row batches, with the same atomic semantics.
type DenseWriter = core.DenseWriter

// Options configure how a file is opened. The zero value detects the format
// and uses the default column names, batch size and one worker per CPU.
type Options = core.Options

// WriteOptions configure a writer made by Create or CreateDense.
type WriteOptions = core.WriteOptions

// Default column names and batch sizes of Options.
const (
	DefaultTermsColumn  = core.DefaultTermsColumn
	DefaultCountsColumn = core.DefaultCountsColumn
	DefaultDocColumn    = core.DefaultDocColumn
	DefaultTermColumn   = core.DefaultTermColumn
	DefaultCountColumn  = core.DefaultCountColumn
	DefaultTextColumn   = core.DefaultTextColumn
	DefaultVectorColumn = core.DefaultVectorColumn
	DefaultValuesColumn = core.DefaultValuesColumn
	DefaultBatchRows    = core.DefaultBatchRows
	DefaultBatchBytes   = core.DefaultBatchBytes
)

// Error locates a problem in an input file: the path and, when known, the line
// (text formats, 1-based), row (0-based document or sample index) and column.
// Err is one of the sentinel errors below; test with errors.Is.
type Error = core.Error

// Errorf builds an *Error at a file position. kind is one of the sentinel
// errors (or nil); the message is formatted from format and args. Use line 0
// and row -1 when they do not apply.
func Errorf(path string, line, row int64, column string, kind error, format string, args ...any) error {
	return core.Errorf(path, line, row, column, kind, format, args...)
}

// Sentinel errors classify what is wrong with an input; test with errors.Is.
var (
	// ErrEmpty: the file holds no data at all.
	ErrEmpty = core.ErrEmpty
	// ErrFormat: the format is unknown or cannot be detected.
	ErrFormat = core.ErrFormat
	// ErrCorrupt: the bytes do not decode (truncated or damaged file, bad compression).
	ErrCorrupt = core.ErrCorrupt
	// ErrSchema: a column is missing or has the wrong type.
	ErrSchema = core.ErrSchema
	// ErrValue: a value is out of range: negative, NaN, non-integer count, term id
	// outside the vocabulary, header that disagrees with the body.
	ErrValue = core.ErrValue
	// ErrOrder: documents are not sorted or not contiguous.
	ErrOrder = core.ErrOrder
)

// Collect reads a whole pass of src into one batch (for tests and small data).
func Collect(ctx context.Context, src DocSource) (*Docs, error) { return core.Collect(ctx, src) }

// CollectDense reads a whole pass of src into one batch.
func CollectDense(ctx context.Context, src DenseSource) (*Dense, error) {
	return core.CollectDense(ctx, src)
}
