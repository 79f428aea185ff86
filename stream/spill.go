package stream

import core "github.com/streamfit/streamfit/internal/stream"

// SpillOptions configure Spill: the directory of the spill file (default
// os.TempDir()), the goroutines decoding it, a callback warned once when it
// cannot be written, and progress.
type SpillOptions = core.SpillOptions

// SpillSource is a DocSource whose first complete pass reads the wrapped
// source and writes a compact binary copy of its documents to a temporary
// file, and whose later passes read that copy: the same batches (same
// boundaries, Start and contents) without re-inflating or re-parsing the
// input. A pass stopped early leaves no copy; a copy that cannot be written
// is given up with one warning and the passes read the source. On unix the
// file's name is removed as soon as it is made, so its space is freed when
// the process ends, however it ends; Close frees it (and removes the file
// elsewhere) and closes the source.
type SpillSource = core.SpillSource

// Spill wraps src so that its passes after the first complete one read a
// spill file (see SpillSource). Close the result to remove the file.
func Spill(src DocSource, o SpillOptions) *SpillSource { return core.Spill(src, o) }

// DecodeHeavy reports whether reading a pass of a source with this Info
// costs much more than reading a spill file of it: text to parse
// (docword, plain or compressed) or raw text to tokenize. Parquet and Arrow
// lists decode about as fast as the spill file, so they are not.
func DecodeHeavy(info Info) bool {
	switch info.Format {
	case "docword", "text-lines", "text-dir":
		return true
	}
	return info.Layout == "text"
}
