package docword

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// A write cancelled during its final copy through the compressor (Ctrl-C
// while `convert … out.txt.gz` finishes) stops with the context's error and
// leaves nothing behind, neither the output nor a temporary file.
func TestCloseContextCancelled(t *testing.T) {
	docs := randomCorpus(rand.New(rand.NewPCG(1, 2)), 2000, 500, 30)
	for _, name := range []string{"docword.a.txt", "docword.a.txt.gz", "docword.a.txt.zst"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			w, err := Create(path, stream.WriteOptions{Terms: 500})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(docs); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := w.CloseContext(ctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("CloseContext after cancel: %v", err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("left %v behind", ents[0].Name())
			}
		})
	}
}
