package stream_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/streamfit/streamfit/stream"
	_ "github.com/streamfit/streamfit/stream/formats"
)

// A program that imports only package stream writes a Parquet file of
// documents and reads it back: every built-in format is known to Open.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "corpus.parquet")

	// Three documents over a vocabulary of five words, in CSR form.
	w, err := stream.Create(path, stream.WriteOptions{Terms: 5, Vocab: []string{"ball", "goal", "team", "bread", "salt"}})
	if err != nil {
		panic(err)
	}
	b := stream.NewDocs(0)
	b.AppendDoc([]int32{0, 1, 2}, []int32{2, 1, 1}) // ball ball goal team
	b.AppendDoc([]int32{3, 4}, []int32{1, 3})       // bread salt salt salt
	b.AppendDoc([]int32{1}, []int32{4})             // goal goal goal goal
	if err := w.Write(b); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}

	// Open detects the format from the file's content; each range over Docs
	// is one pass over the file.
	src, err := stream.Open(path, stream.Options{})
	if err != nil {
		panic(err)
	}
	defer stream.Close(src)
	info := src.Info()
	fmt.Println(info.Format, info.Terms, "terms:", info.Vocab)
	for batch, err := range src.Docs(context.Background()) {
		if err != nil {
			panic(err)
		}
		for i := range batch.Len() {
			terms, counts := batch.Doc(i)
			fmt.Println("document", batch.Start+int64(i), terms, counts, "tokens:", batch.Length(i))
		}
		batch.Release()
	}
	// Output:
	// parquet 5 terms: [ball goal team bread salt]
	// document 0 [0 1 2] [2 1 1] tokens: 4
	// document 1 [3 4] [1 3] tokens: 4
	// document 2 [1] [4] tokens: 4
}

// Formats lists what Open, OpenDense and Create know without any other import.
func ExampleFormats() {
	fmt.Println(stream.Formats())
	// Output: [arrow arrow-stream csv dataset docword npy npz parquet text-dir text-lines tsv]
}
