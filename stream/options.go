package stream

import (
	"fmt"
	"math"
	"runtime"
)

// Options configure how a file is opened. The zero value detects the format and
// uses the default column names, batch size and one worker per CPU.
type Options struct {
	// Format forces a format by name ("docword", "parquet", "arrow", "arrow-stream",
	// "dataset", "npz", "npy", "csv", "tsv", "text-lines", "text-dir"); empty
	// detects it from the name and the content.
	Format string
	// VocabPath names a vocabulary file, one word per line (UCI vocab.*.txt).
	VocabPath string
	// Terms is the vocabulary size when the file does not record it (0 = unknown).
	Terms int

	// Column names for document tables. TermsColumn/CountsColumn: the list
	// layout (list of term ids + list of counts) or the pairs layout
	// (TermsColumn holds list<struct<term,count>>). DocColumn/TermColumn/
	// CountColumn: the long (doc, term, count) layout. TextColumn: raw text.
	// VectorColumn: the vector layout, a column of Spark ML vectors
	// (struct<type, size, indices list<int>, values list<double>>, as
	// CountVectorizer writes them).
	TermsColumn, CountsColumn          string
	DocColumn, TermColumn, CountColumn string
	TextColumn                         string
	VectorColumn                       string

	// Dense tables: ValuesColumn holds fixed_size_list<float> or list<float>;
	// Columns lists numeric columns instead (empty with no ValuesColumn means
	// every floating point column). GroupColumn is an optional id column.
	// In an .npz file ValuesColumn and GroupColumn name members, and in
	// .npy and .npz arrays Columns chooses columns by 0-based index; in CSV
	// and TSV files they name header columns.
	ValuesColumn string
	Columns      []string
	GroupColumn  string

	// Tokenization of raw text (see stream/text): TokenPattern is a regular
	// expression matching one token (default: runs of letters/digits of length
	// >= 2); KeepCase disables lower-casing; StopWords is "english" (default),
	// "none", or the path of a file with one stop word per line. The same settings
	// must be used to build a vocabulary and to tokenize against it.
	TokenPattern string
	KeepCase     bool
	StopWords    string

	// BatchRows is the most rows per batch (default 4096). Dense batches are
	// also kept under BatchBytes (default 2 MB), so wide rows come in fewer
	// per batch. Documents read from Parquet row groups and Arrow record
	// batches may come in larger batches: see BatchEntries.
	BatchRows  int
	BatchBytes int
	// BatchEntries cuts the documents of a Parquet row group or an Arrow
	// record batch (lists, pairs and vector layouts) into batches of about
	// this many entries: RunRows rows, from BatchRows up to
	// MaxBatchGrowth × BatchRows, the same for every batch of the piece.
	// Short documents then come in larger batches, which cost less per
	// document to accumulate; long ones keep BatchRows. The count is a
	// function of the piece alone (its rows and entries, from the Parquet
	// footer or the record batch), so a pass over the whole file and passes
	// over ranges of its pieces cut the same batches. 0 means
	// DefaultBatchEntries when BatchRows is unset too, and off when
	// BatchRows is set (a batch is then BatchRows rows, as asked); negative
	// is off. Other sources (docword, text, npz, the long layout) cut by
	// rows alone.
	BatchEntries int
	// InflightBytes bounds the decoded data a pass holds ahead of the
	// consumer (default DefaultInflightBytes), whatever the size of the
	// file's row groups or record batches.
	InflightBytes int64
	// Workers is the number of decoding goroutines (default GOMAXPROCS).
	Workers int
	// Progress, when non-nil, is advanced as rows and bytes are read.
	Progress *Progress
	// Warn, when non-nil, is told of what a source passed over without
	// failing (binary files in a directory of text files); nil drops it.
	Warn *Warner
}

// Warner receives the warnings of a source. It is a pointer to a struct with
// no exported fields, as Progress is, so Options stays a plain value that
// pipelines can serialise (a func field could not be).
type Warner struct{ f func(msg string) }

// NewWarner returns a Warner that hands each warning to f.
func NewWarner(f func(msg string)) *Warner { return &Warner{f: f} }

// Warnf calls o.Warn, if set, with the formatted message.
func (o Options) Warnf(format string, args ...any) {
	if o.Warn != nil && o.Warn.f != nil {
		o.Warn.f(fmt.Sprintf(format, args...))
	}
}

// Default column names.
const (
	DefaultTermsColumn  = "terms"
	DefaultCountsColumn = "counts"
	DefaultDocColumn    = "doc"
	DefaultTermColumn   = "term"
	DefaultCountColumn  = "count"
	DefaultTextColumn   = "text"
	DefaultVectorColumn = "features"
	DefaultValuesColumn = "x"
	DefaultBatchRows    = 4096
	DefaultBatchBytes   = 2 << 20
	// DefaultBatchEntries is the entries a batch of documents read from
	// columnar pieces aims at (Options.BatchEntries): 4096 documents of 128
	// entries; documents of more keep 4096 rows a batch.
	DefaultBatchEntries = 1 << 19
	// MaxBatchGrowth bounds a batch cut by entries at this many times
	// BatchRows rows: the memory a pass holds per batch in flight grows
	// with its rows.
	MaxBatchGrowth = 4
)

// WithDefaults returns o with every unset field given its default.
func (o Options) WithDefaults() Options {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&o.TermsColumn, DefaultTermsColumn)
	def(&o.CountsColumn, DefaultCountsColumn)
	def(&o.DocColumn, DefaultDocColumn)
	def(&o.TermColumn, DefaultTermColumn)
	def(&o.CountColumn, DefaultCountColumn)
	def(&o.TextColumn, DefaultTextColumn)
	def(&o.VectorColumn, DefaultVectorColumn)
	if o.BatchRows <= 0 {
		o.BatchRows = DefaultBatchRows
		if o.BatchEntries == 0 {
			o.BatchEntries = DefaultBatchEntries
		}
	}
	if o.BatchEntries <= 0 {
		o.BatchEntries = -1
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = DefaultBatchBytes
	}
	if o.InflightBytes <= 0 {
		o.InflightBytes = DefaultInflightBytes
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o
}

// RunRows is the rows of each batch cut from a piece of n rows holding
// entries entries (Options.BatchEntries): ceil(BatchEntries / the piece's
// mean entries a row), within [BatchRows, MaxBatchGrowth × BatchRows];
// BatchRows when the cut by entries is off. o must have its defaults.
func (o Options) RunRows(n, entries int64) int {
	lo := max(o.BatchRows, 1)
	if o.BatchEntries <= 0 || n <= 0 {
		return lo
	}
	hi := lo * MaxBatchGrowth
	if entries <= 0 {
		return hi
	}
	// In floating point, which cannot overflow; a product and a quotient
	// are rounded the same on every platform.
	r := math.Ceil(float64(o.BatchEntries) * float64(n) / float64(entries))
	if r >= float64(hi) {
		return hi
	}
	return max(int(r), lo)
}

// WriteOptions configure a writer made by Create or CreateDense.
type WriteOptions struct {
	// Format forces the output format; empty picks it from the file name.
	Format string
	// Terms is the vocabulary size d (docword header, Parquet metadata).
	Terms int
	// Vocab, when non-nil, is stored with the data where the format allows it
	// (Parquet/Arrow metadata) and written beside docword files by the caller.
	Vocab []string
	// Layout picks the document layout for columnar formats ("lists" default,
	// "pairs", "long"); the column names come from Options defaults.
	Layout string
	// Compression for columnar formats: "zstd" (Parquet default), "snappy", "lz4",
	// "none" (Arrow IPC default: it is read at memory speed).
	Compression string
	// RowGroupRows, when set, is the number of rows per Parquet row group or
	// Arrow record batch. By default a row group or batch is closed when its
	// decoded data reaches RowGroupBytes.
	RowGroupRows int
	// RowGroupBytes bounds the decoded size of a row group (default 64 MB) or
	// an Arrow record batch (default 4 MB). Readers decode row groups in
	// pieces, so this sets the writer's memory and the unit of parallel
	// reading, not the reader's memory.
	RowGroupBytes int64
	// Progress, when non-nil, is advanced by the bytes written to the file
	// (docword: before compression).
	Progress *Progress
}

// DocWriter writes document batches to a file. Nothing is visible at the final
// path until Close succeeds; Abort (or a failed Close) removes the temporary file.
type DocWriter interface {
	Write(b *Docs) error
	Close() error
	Abort() error
}

// DenseWriter writes dense row batches, with the same atomic semantics.
type DenseWriter interface {
	Write(b *Dense) error
	Close() error
	Abort() error
}
