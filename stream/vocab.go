package stream

import (
	core "github.com/streamfit/streamfit/internal/stream"
)

// ReadVocab reads a vocabulary file: one word per line, line i (1-based)
// naming term id i-1, as in the UCI bag-of-words vocab.*.txt files.
func ReadVocab(path string) ([]string, error) { return core.ReadVocab(path) }

// WriteVocab writes words one per line, atomically.
func WriteVocab(path string, words []string) error { return core.WriteVocab(path, words) }
