package text_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/text"
)

func ExampleTokenizer_Tokens() {
	tok, err := text.NewTokenizer(stream.Options{}) // lower case, default pattern, English stop words
	if err != nil {
		panic(err)
	}
	fmt.Println(tok.Tokens(nil, "The Cat sat on the mat; R2D2 watched, in 2024."))
	// Output: [cat sat mat r2d2 watched 2024]
}

func ExampleBuild() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	corpus := filepath.Join(dir, "corpus.txt")
	os.WriteFile(corpus, []byte("red apples\ngreen apples and red pears\nred wine\n"), 0o644)

	// A vocabulary pass, written once...
	src, err := stream.OpenText(corpus, stream.Options{})
	if err != nil {
		panic(err)
	}
	v, err := text.Build(context.Background(), src, stream.Options{}, text.BuildOptions{MinCount: 1, MaxDocFreq: 1})
	if err != nil {
		panic(err)
	}
	vocab := filepath.Join(dir, "vocab.txt")
	if err := v.Write(vocab); err != nil {
		panic(err)
	}
	fmt.Println(v.Words, v.Counts)

	// ...and reused to read the text as bag-of-words documents.
	docs, err := stream.Open(corpus, stream.Options{VocabPath: vocab})
	if err != nil {
		panic(err)
	}
	all, err := stream.Collect(context.Background(), docs)
	if err != nil {
		panic(err)
	}
	for i := range all.Len() {
		fmt.Println(all.Doc(i))
	}
	// Output:
	// [red apples green pears wine] [3 2 1 1 1]
	// [0 1] [1 1]
	// [0 1 2 3] [1 1 1 1]
	// [0 4] [1 1]
}

func ExampleHeldOut() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	corpus := filepath.Join(dir, "corpus.txt")
	os.WriteFile(corpus, []byte("one\ntwo\nthree\nfour\nfive\nsix\nseven\n"), 0o644)
	src, err := stream.OpenText(corpus, stream.Options{})
	if err != nil {
		panic(err)
	}
	train, test := text.HeldOut(src, 3) // every 3rd document held out
	for _, part := range []stream.TextSource{train, test} {
		var docs []string
		for b, err := range part.Texts(context.Background()) {
			if err != nil {
				panic(err)
			}
			docs = append(docs, b.Text...)
		}
		fmt.Println(docs)
	}
	// Output:
	// [one two four five seven]
	// [three six]
}
