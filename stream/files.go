package stream

import (
	"os"

	core "github.com/streamfit/streamfit/internal/stream"
)

// AtomicFile is an output file written under a temporary name in the target's
// directory and renamed into place by Commit, so an interrupted or failed
// write never leaves a file that looks complete.
type AtomicFile = core.AtomicFile

// CreateAtomic opens a temporary file beside path (beside the file a
// symbolic link at path points to), or path itself when it is a character
// device or a FIFO, which is written into; directories and other special
// files are refused.
func CreateAtomic(path string) (*AtomicFile, error) { return core.CreateAtomic(path) }

// StaleTemp is the age beyond which a temporary file left beside an output by
// a killed write is removed by the next write of the same output.
const StaleTemp = core.StaleTemp

// TempBeside creates a hidden temporary file ".NAME.KIND-*" beside the output
// path, where it can be renamed onto the output (in the system's temporary
// directory when the output is a device or FIFO), removing stale ones first.
func TempBeside(path, kind string) (*os.File, error) { return core.TempBeside(path, kind) }

// CheckWritable reports whether a file can be created at path, by creating
// and removing a temporary file beside it (a FIFO is not opened).
func CheckWritable(path string) error { return core.CheckWritable(path) }

// CheckOutputs checks, before any work, that no output is one of the inputs
// and that no two outputs are the same file (by device and inode when they
// exist, by absolute path with symbolic links followed when not).
func CheckOutputs(inputs, outputs []string) error { return core.CheckOutputs(inputs, outputs) }

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
