// Package docword reads and writes the UCI bag-of-words format
// (https://archive.ics.uci.edu/dataset/164/bag+of+words): a docword file holds
// three header lines D (documents), W (vocabulary size) and NNZ (entries),
// then NNZ lines "docID wordID count" with 1-based ids, plain or compressed
// with gzip or zstd; an optional vocab file names the W words, one per line.
// It also reads Matrix Market coordinate files of counts, documents as rows
// and terms as columns (what gensim's MmCorpus.serialize writes): the banner
// "%%MatrixMarket matrix coordinate real general", comment lines, one line
// "D W NNZ", then the same entries, whose counts may be written "2.0".
//
// The package owns the "docword" format of the stream registry, through which
// stream.Open and stream.Create handle such files.
// Reading is parallel: one goroutine decompresses and cuts the file into large
// chunks at line boundaries, workers parse the chunks, and the results are
// stitched in order into batches of documents, so a document cut between two
// chunks comes out whole. Row i of the source is document id i+1; ids the file
// skips are empty documents.
package docword
