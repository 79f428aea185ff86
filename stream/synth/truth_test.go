package synth

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/models/ica"
	"github.com/streamfit/streamfit/models/markov"
	"github.com/streamfit/streamfit/models/multiview"
)

// roundTrip writes the truth of g to a file, reads it back with read (the
// model's own reader) and checks that it is the Truth written, and that the
// file records the generation's Params.
func roundTrip[M any](t *testing.T, g interface{ WriteTruth(string) error }, truth *M, params map[string]any, read func(string) (*M, error)) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "truth.json")
	if err := g.WriteTruth(p); err != nil {
		t.Fatal(err)
	}
	got, err := read(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, truth) {
		t.Errorf("the truth read back differs:\n%+v\n%+v", got, truth)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Params map[string]any `json:"params"`
	}
	if err := json.Unmarshal(b, &file); err != nil || file.Params["seed"] != float64(params["seed"].(uint64)) {
		t.Errorf("params %v (%v), want seed %v", file.Params, err, params["seed"])
	}
}

// Every dense generator's truth file reads, with the model's Read, as the
// model the rows were drawn from.
func TestDenseTruthFiles(t *testing.T) {
	g, err := NewGMM(GMMConfig{Rows: 10, D: 4, K: 2, Differing: true, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, g, &g.Truth, g.Params, gmm.Read)
	i, err := NewICA(ICAConfig{Rows: 10, D: 4, K: 2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, i, &i.Truth, i.Params, ica.Read)
	h, err := NewHMMSeq(HMMSeqConfig{Seqs: 4, Len: 3, K: 2, D: 3, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, h, &h.Truth, h.Params, hmm.Read)
	for _, m := range []int{0, 5} {
		s, err := NewSnapshots(SnapshotConfig{Sets: 4, PerSet: 5, K: 3, M: m, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, s, &s.Truth, s.Params, markov.Read)
	}
	v, err := NewMultiView(MultiViewConfig{Rows: 10, Dims: [3]int{2, 3, 4}, K: 2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, v, &v.Truth, v.Params, multiview.Read)
}
