package lda

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamfit/streamfit/models"
)

// TestModelWriteMatchesMarshal checks that models.Model.Write, which encodes
// the topics one row at a time to bound its memory, produces exactly
// json.Marshal's bytes, with and without a vocabulary (one of whose words
// mimics the topics key) and fit statistics.
func TestModelWriteMatchesMarshal(t *testing.T) {
	m := &models.Model{Model: "lda", K: 2, D: 3, Alpha0: 1, Alpha: []float64{0.6, 0.4},
		Topics: [][]float64{{0.5, 0.25, 0.25}, {0.1, 0.2, 0.7}}}
	with := *m
	with.Vocab = []string{`a"topics":null`, "b", "c"}
	with.Fit = &models.FitRecord{Docs: 10, Passes: 2, Warnings: []string{"w"}}
	for _, c := range []*models.Model{m, &with} {
		path := filepath.Join(t.TempDir(), "m.json")
		if err := c.Write(path); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		want, _ := json.Marshal(c)
		if string(got) != string(want)+"\n" {
			t.Errorf("Write gave\n%s\nwant\n%s", got, want)
		}
	}
}
