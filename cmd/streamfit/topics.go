package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

func init() {
	register("topics", "print the top words of each topic of a fitted topic model", runTopics)
}

func runTopics(ctx context.Context, args []string) error {
	fs := newFlags("topics", "", "Prints each topic's weight and its most probable words (term ids when the model has no vocabulary and --vocab is not given).")
	modelPath := fs.String("model", "model.json", "fitted topic model")
	top := fs.Int("top", 10, "words per topic")
	vocabPath := fs.String("vocab", "", "vocabulary file, when the model does not carry one")
	if pos, err := parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	m, err := models.Read(*modelPath)
	if err != nil {
		return err
	}
	vocab := m.Vocab
	if *vocabPath != "" {
		if vocab, err = stream.ReadVocab(*vocabPath); err != nil {
			return err
		}
		if len(vocab) != m.D {
			return fmt.Errorf("%s has %d words but the model has d=%d", *vocabPath, len(vocab), m.D)
		}
	}
	printTopics(m, vocab, *top)
	return nil
}

// printTopics writes one line per topic: index, weight α (normalised), top words.
func printTopics(m *models.Model, vocab []string, top int) {
	var asum float64
	for _, a := range m.Alpha {
		asum += a
	}
	idx := make([]int, m.D)
	for t, row := range m.Topics {
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return row[idx[a]] > row[idx[b]] })
		fmt.Printf("topic %-3d weight %.3f:", t, m.Alpha[t]/asum)
		for _, w := range idx[:min(top, m.D)] {
			word := "#" + strconv.Itoa(w)
			if vocab != nil {
				word = vocab[w]
			}
			fmt.Printf(" %s", word)
		}
		fmt.Println()
	}
}
