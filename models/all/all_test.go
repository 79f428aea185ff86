package all_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/streamfit/streamfit/models"
	_ "github.com/streamfit/streamfit/models/all"
	"github.com/streamfit/streamfit/stream/synth"
)

// Every registered kind has a name and a summary, and names are unique
// (Register refuses a second one).
func TestKinds(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range models.Kinds() {
		if k.Name() == "" || k.Summary() == "" || seen[k.Name()] {
			t.Errorf("kind %q (%q): empty or repeated", k.Name(), k.Summary())
		}
		seen[k.Name()] = true
		if got, err := models.Lookup(k.Name()); err != nil || got != k {
			t.Errorf("Lookup(%q) = %v, %v", k.Name(), got, err)
		}
	}
	if _, err := models.Lookup("no-such-model"); err == nil {
		t.Error("Lookup of an unknown name succeeded")
	}
}

// Every generator's truth file reads, with the Read of the kind it names,
// as the model the data were drawn from.
func TestTruthFiles(t *testing.T) {
	small := map[string]string{"rows": "12", "docs": "10", "vocab": "20", "sets": "4", "per-set": "5", "seqs": "4", "len": "3", "d": "4", "k": "3"}
	for _, g := range models.Generators() {
		fs := flag.NewFlagSet(g.Name(), flag.ContinueOnError)
		draw := g.Flags(fs)
		for name, v := range small {
			if fs.Lookup(name) != nil {
				fs.Set(name, v)
			}
		}
		w, err := draw()
		if err != nil {
			t.Fatalf("%s: %v", g.Name(), err)
		}
		path := filepath.Join(t.TempDir(), "truth.json")
		if err := w.WriteTruth(path); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			Model  string         `json:"model"`
			Params map[string]any `json:"params"`
		}
		if err := json.Unmarshal(b, &head); err != nil || head.Params["seed"] != 1.0 {
			t.Errorf("%s: %v: params %v", g.Name(), err, head.Params)
		}
		k, err := models.Lookup(head.Model)
		if err != nil {
			t.Fatal(err)
		}
		got, err := k.Read(path)
		if err != nil {
			t.Fatalf("%s: %v", g.Name(), err)
		}
		switch w := w.(type) {
		case models.DenseData:
			if !reflect.DeepEqual(got, w.Truth) {
				t.Errorf("%s: the truth read back differs:\n%+v\n%+v", g.Name(), got, w.Truth)
			}
		case *synth.Corpus:
			m := got.(*models.Model)
			if m.Model != w.Truth.Model || m.Alpha0 != w.Truth.Alpha0 || !reflect.DeepEqual(m.Alpha, w.Truth.Alpha) || !reflect.DeepEqual(m.Topics, w.Truth.Topics) {
				t.Errorf("%s: the truth read back differs: %+v", g.Name(), m)
			}
		default:
			t.Errorf("%s: data of type %T", g.Name(), w)
		}
	}
}
