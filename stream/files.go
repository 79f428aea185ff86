package stream

import core "github.com/streamfit/streamfit/internal/stream"

// AtomicFile is an output file written under a temporary name in the target's
// directory and renamed into place by Commit, so an interrupted or failed
// write never leaves a file that looks complete.
type AtomicFile = core.AtomicFile

// CreateAtomic opens a temporary file beside path.
func CreateAtomic(path string) (*AtomicFile, error) { return core.CreateAtomic(path) }

// CheckWritable reports whether a file can be created at path, by creating
// and removing a temporary file beside it.
func CheckWritable(path string) error { return core.CheckWritable(path) }

// WriteFileAtomic writes data to path through a temporary file.
func WriteFileAtomic(path string, data []byte) error { return core.WriteFileAtomic(path, data) }

// WriteJSONRows stores v as JSON at path, atomically, with the field whose
// key is key — which must encode as null in v — replaced by rows, encoded one
// row at a time, so a large matrix is never held as text in memory.
func WriteJSONRows(path string, v any, key string, rows [][]float64) error {
	return core.WriteJSONRows(path, v, key, rows)
}

// ReadVocab reads a vocabulary file: one word per line, line i (1-based)
// naming term id i-1, as in the UCI bag-of-words vocab.*.txt files.
func ReadVocab(path string) ([]string, error) { return core.ReadVocab(path) }

// WriteVocab writes words one per line, atomically.
func WriteVocab(path string, words []string) error { return core.WriteVocab(path, words) }

// FormatVocab lays words out as a vocabulary file: one per line.
func FormatVocab(words []string) []byte { return core.FormatVocab(words) }
