package report_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/report"
)

// Build the page of a two-topic model over four words and write it.
func ExampleBuild() {
	dir, _ := os.MkdirTemp("", "report")
	defer os.RemoveAll(dir)
	m := &models.Model{Model: "lda", K: 2, D: 4, Alpha0: 1, Alpha: []float64{0.6, 0.4},
		Topics: [][]float64{{0.5, 0.3, 0.1, 0.1}, {0.1, 0.1, 0.2, 0.6}},
		Vocab:  []string{"go", "rust", "tea", "coffee"}}
	path := filepath.Join(dir, "model.json")
	if err := m.Write(path); err != nil {
		panic(err)
	}
	d, err := report.Build(context.Background(), path, report.Options{})
	if err != nil {
		panic(err)
	}
	if err := report.Write(filepath.Join(dir, "report.html"), d); err != nil {
		panic(err)
	}
	fmt.Println(d.Summary)
	fmt.Println("most salient word:", d.Topics.Words[d.Topics.Salient[0]])
	fmt.Println(d.Notes[0])
	// Output:
	// lda model, k = 2, d = 4
	// most salient word: coffee
	// The model file records no fit (a truth file, or written by another tool): no provenance to show.
}
