package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// topicsAbout is the help of `streamfit topics`.
const topicsAbout = "Prints each topic's weight and its most probable words (term ids when the model has no vocabulary and --vocab is not given). With --relevance λ < 1 the words are ranked by LDAvis's relevance λ·log p(w|t) + (1−λ)·log(p(w|t)/p(w)) instead, which lowers the words every topic shares (0.6 is LDAvis's suggestion; the report's slider is the same measure)."

func runTopics(ctx context.Context, e *env, args []string) error {
	fs := newFlags("topics", "", topicsAbout)
	modelPath := fs.String("model", "model.json", "fitted topic model")
	top := fs.Int("top", 10, "words per topic")
	lambda := fs.Float64("relevance", 1, "rank words by relevance with this λ in [0, 1] (1: by probability)")
	vocabPath := fs.String("vocab", "", "vocabulary file, when the model does not carry one")
	out := fs.String("out", "", "write the table (topic, weight, rank, term, word, probability) to this file instead of printing: .csv, .tsv or .jsonl by its extension, - for standard output as CSV")
	outFormat := fs.String("out-format", "", "the format of --out when its extension does not say: csv, tsv or jsonl")
	if pos, err := e.parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	if !(*lambda >= 0 && *lambda <= 1) {
		return usagef("--relevance=%g: want λ in [0, 1]", *lambda)
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
	if *out != "" {
		return writeTable(*out, *outFormat, e.stdout, []string{"topic", "weight", "rank", "term", "word", "probability"}, topicRows(m, vocab, *top, *lambda))
	}
	if *outFormat != "" {
		return usagef("--out-format needs --out")
	}
	e.printTopics(m, vocab, *top, *lambda)
	return nil
}

// topicRows is the long table of each topic's top words: one row per
// (topic, rank), the word's probability in the topic beside it (the word
// is empty without a vocabulary).
func topicRows(m *models.Model, vocab []string, top int, lambda float64) [][]tableCell {
	pi := models.TopicWeights(m.K, m.Alpha)
	var rows [][]tableCell
	for t, words := range models.TopWords(m.Topics, m.Alpha, top, lambda) {
		for r, w := range words {
			word := ""
			if vocab != nil {
				word = vocab[w]
			}
			rows = append(rows, []tableCell{intCell(t), numCell(pi[t]), intCell(r + 1), intCell(w), strCell(word), numCell(m.Topics[t][w])})
		}
	}
	return rows
}

// printTopics writes one line per topic: index, weight α (normalised), and
// its top words by relevance λ (models.TopWords; 1: by probability).
func (e *env) printTopics(m *models.Model, vocab []string, top int, lambda float64) {
	pi := models.TopicWeights(m.K, m.Alpha)
	for t, words := range models.TopWords(m.Topics, m.Alpha, top, lambda) {
		fmt.Fprintf(e.stdout, "topic %-3d weight %.3f:", t, pi[t])
		for _, w := range words {
			word := "#" + strconv.Itoa(w)
			if vocab != nil {
				word = vocab[w]
			}
			fmt.Fprintf(e.stdout, " %s", word)
		}
		fmt.Fprintln(e.stdout)
	}
}
