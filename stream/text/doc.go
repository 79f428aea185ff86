// Package text owns streamfit's raw text input: the tokenizer (lower-casing, a
// token pattern, stop words), the "text-lines" source (one document per line of
// a plain, gzip or zstd file) and the "text-dir" source (one document per file
// of a directory tree), the vocabulary builder, and the bag-of-words source that
// turns any stream.TextSource into a stream.DocSource against a vocabulary file.
//
// The package registers both formats with the stream registry and installs the
// bag-of-words conversion there, so stream.Open reads raw text (including a
// Parquet or Arrow text column) like any other document file:
//
//	src, err := stream.Open("corpus.txt.zst", stream.Options{VocabPath: "vocab.txt"})
//
// A vocabulary is built once with Build and written with Vocabulary.Write; later
// runs reuse the file. The tokenizer settings in stream.Options (TokenPattern,
// KeepCase, StopWords) must be the same for both. HeldOut splits any text
// source into a training part and a held-out part (every n-th document), for
// a vocabulary and a fit on one and scores on the other.
package text
