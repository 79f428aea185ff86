package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamfit/streamfit/stream"
)

// gensimPython returns a Python that imports gensim (Debian's
// python3-gensim), or skips the test; with STREAMFIT_REQUIRE_GENSIM set
// (as .ci/run sets it) a missing gensim fails it instead.
func gensimPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(py, "-c", "import gensim").Run() == nil {
			return py
		}
	}
	if os.Getenv("STREAMFIT_REQUIRE_GENSIM") != "" {
		t.Fatal("gensim is required (STREAMFIT_REQUIRE_GENSIM) but no python3 imports it")
	}
	t.Skip("no python3 with gensim (Debian: apt-get install python3-gensim)")
	return ""
}

// gensim's own corpus files read as gensim reads them: the Go source tree's
// files of one package, tokenized and filtered by gensim, serialized with
// MmCorpus and Dictionary.save_as_text, are the same documents word for
// word when streamfit reads the .mm with the dictionary as its vocabulary,
// and fit lda runs on them.
func TestGensimCorpusFiles(t *testing.T) {
	py := gensimPython(t)
	src := goSource(t, "net/http")
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	script := `
import json, os, sys
from gensim.corpora import Dictionary, MmCorpus
from gensim.utils import simple_preprocess
src, out = sys.argv[1], sys.argv[2]
texts = []
for name in sorted(os.listdir(src)):
    path = os.path.join(src, name)
    if os.path.isfile(path) and name.endswith(".go"):
        texts.append(simple_preprocess(open(path, encoding="utf-8", errors="replace").read()))
d = Dictionary(texts)
d.filter_extremes(no_below=2, no_above=0.5)
bows = [d.doc2bow(t) for t in texts]
MmCorpus.serialize(os.path.join(out, "corpus.mm"), bows)
d.save_as_text(os.path.join(out, "dict.txt"))
json.dump([{d[w]: c for w, c in bow} for bow in bows], open(os.path.join(out, "bows.json"), "w"))
`
	if out, err := exec.Command(py, "-c", script, src, dir).CombinedOutput(); err != nil {
		t.Fatalf("gensim: %v\n%s", err, out)
	}
	var want []map[string]int32
	b, err := os.ReadFile(p("bows.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	docs, err := stream.Open(p("corpus.mm"), stream.Options{VocabPath: p("dict.txt")})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close(docs)
	vocab := docs.Info().Vocab
	all, err := stream.Collect(context.Background(), docs)
	if err != nil {
		t.Fatal(err)
	}
	if all.Len() != len(want) || len(want) < 50 {
		t.Fatalf("%d documents, gensim wrote %d", all.Len(), len(want))
	}
	for i := range want {
		terms, counts := all.Doc(i)
		got := map[string]int32{}
		for j, w := range terms {
			got[vocab[w]] = counts[j]
		}
		if len(got) != len(want[i]) {
			t.Fatalf("document %d: %d words, gensim's %d", i, len(got), len(want[i]))
		}
		for w, c := range want[i] {
			if got[w] != c {
				t.Fatalf("document %d: %q counted %d, gensim %d", i, w, got[w], c)
			}
		}
	}
	mustRun(t, "fit", "lda", "--input", p("corpus.mm"), "--vocab", p("dict.txt"), "--k", "5", "--progress", "off", "--out", p("m.json"))
	if out := mustRun(t, "topics", "--model", p("m.json")); strings.Count(out, "topic ") != 5 {
		t.Errorf("topics:\n%s", out)
	}
}
