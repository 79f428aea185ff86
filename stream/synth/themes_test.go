package synth

import (
	"math"
	"testing"
)

// A themed corpus names its words, and each topic puts at least themeShare
// of its mass on its own theme; mismatched sizes are refused.
func TestThemedTopics(t *testing.T) {
	c, err := NewLDA(LDAConfig{Docs: 10, Themes: Themes, K: 4, DocLen: 20, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	info := c.Info()
	if info.Terms != 120 || len(info.Vocab) != 120 || info.Vocab[30] != Themes[1].Words[0] {
		t.Fatalf("vocabulary: %d terms, %d words", info.Terms, len(info.Vocab))
	}
	for i, topic := range c.Truth.Topics {
		var own, all float64
		for j, p := range topic {
			all += p
			if j/30 == i {
				own += p
			}
		}
		if math.Abs(all-1) > 1e-9 || own < themeShare-1e-9 {
			t.Errorf("topic %d: total %g, %g on its theme", i, all, own)
		}
	}
	for _, cfg := range []LDAConfig{
		{Docs: 1, Themes: Themes, K: 11, DocLen: 5},
		{Docs: 1, Themes: Themes, Vocab: 100, DocLen: 5},
		{Docs: 1, Themes: []Theme{{"a", []string{"x", "y"}}, {"b", []string{"y"}}}, DocLen: 5},
	} {
		if _, err := NewLDA(cfg); err == nil {
			t.Errorf("accepted k=%d vocab=%d over %d themes", cfg.K, cfg.Vocab, len(cfg.Themes))
		}
	}
}
