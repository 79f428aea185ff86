package models_test

import (
	"context"
	"flag"
	"fmt"

	"github.com/streamfit/streamfit/models"
	_ "github.com/streamfit/streamfit/models/all"
	"github.com/streamfit/streamfit/stream/synth"
)

// Fit a model found by name in the registry, with settings given as its
// command-line flags, as streamfit fit does for every model.
func ExampleLookup() {
	k, err := models.Lookup("gmm")
	if err != nil {
		panic(err)
	}
	s := k.Settings(models.FitFlags)
	fs := flag.NewFlagSet("fit "+k.Name(), flag.ContinueOnError)
	s.Flags(fs)
	if err := fs.Parse([]string{"--differing"}); err != nil {
		panic(err)
	}
	if err := s.Check(models.Check{Given: models.Given(fs)}); err != nil {
		panic(err)
	}
	src, err := synth.NewGMM(synth.GMMConfig{Rows: 20000, D: 6, K: 3, Differing: true, Seed: 1})
	if err != nil {
		panic(err)
	}
	m, err := s.(models.DenseSettings).Fit(context.Background(), src, models.Common{K: 3, Seed: 2})
	if err != nil {
		panic(err)
	}
	fmt.Println(k.Name()+":", k.Summary())
	fmt.Println(m.Summary())
	// Output:
	// gmm: Gaussian mixture on dense samples: spherical (common or differing variances) or, by EM, diagonal
	// 3 components in d=6 from 20000 rows, 2 passes (exact), then 2 EM passes (log-likelihood -9.1825 per row)
}

// The registered models, as the commands list them.
func ExampleKinds() {
	for _, k := range models.Kinds() {
		_, dense := k.Settings(models.FitFlags).(models.DenseSettings)
		fmt.Printf("%-12s dense rows: %v\n", k.Name(), dense)
	}
	// Output:
	// lda          dense rows: false
	// topic        dense rows: false
	// gmm          dense rows: true
	// markov       dense rows: true
	// hmm-snapshot dense rows: true
	// ica          dense rows: true
	// hmm          dense rows: true
	// multiview    dense rows: true
}
