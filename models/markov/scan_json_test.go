package markov

import (
	"encoding/json"
	"math"
	"path/filepath"
	"testing"
)

// An r where P(r) is undefined has an infinite distance and negative mass;
// a model whose scan holds such a point is written (as null) and read back
// with the same values.
func TestScanPointInfinityRoundTrip(t *testing.T) {
	m := &Model{Model: "markov", K: 1, D: 1, R: 0.5, Pi: []float64{1}, P: [][]float64{{1}}, T: [][]float64{{1}},
		Scan: []ScanPoint{{R: 0.9, Dist: 0.25, Neg: 0.5}, {R: 0.1, Dist: math.Inf(1), Neg: math.Inf(1), Pole: true}}}
	b, err := json.Marshal(m.Scan)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var back []ScanPoint
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	if len(back) != 2 || back[0] != m.Scan[0] || back[1].R != 0.1 || !math.IsInf(back[1].Dist, 1) || !math.IsInf(back[1].Neg, 1) || !back[1].Pole {
		t.Fatalf("round trip of %s gave %+v, want %+v", b, back, m.Scan)
	}
	path := filepath.Join(t.TempDir(), "m.json")
	if err := m.Write(path); err != nil {
		t.Fatalf("writing a model whose scan has an infinite point: %v", err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatalf("reading it back: %v", err)
	}
	if !math.IsInf(got.Scan[1].Neg, 1) || got.Scan[0] != m.Scan[0] {
		t.Fatalf("read back %+v", got.Scan)
	}
}
