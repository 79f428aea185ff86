package synth

import (
	"fmt"
	"math/rand/v2"
)

// Theme is a named list of words that belong together: a generated topic
// drawn from it reads as that subject.
type Theme struct {
	Name  string
	Words []string
}

// Themes is a built-in vocabulary of ten subjects, 30 words each, no word in
// two of them: LDAConfig.Themes set to it gives a corpus whose topics a reader
// recognises at a glance.
var Themes = []Theme{
	{"sports", []string{"team", "game", "goal", "coach", "season", "player", "league", "match", "score", "win",
		"ball", "field", "referee", "fans", "stadium", "championship", "defense", "tournament", "striker", "penalty",
		"captain", "trophy", "training", "injury", "transfer", "final", "halftime", "keeper", "pitch", "sprint"}},
	{"food", []string{"recipe", "bread", "cheese", "kitchen", "flavor", "sauce", "garlic", "butter", "oven", "dinner",
		"salad", "soup", "pasta", "spice", "chef", "dessert", "chocolate", "flour", "roast", "onion",
		"pepper", "vinegar", "tomato", "breakfast", "noodles", "grill", "dough", "honey", "lemon", "olive"}},
	{"music", []string{"song", "album", "band", "guitar", "concert", "singer", "melody", "drums", "lyrics", "tour",
		"piano", "chorus", "rhythm", "jazz", "orchestra", "violin", "record", "studio", "bass", "tempo",
		"harmony", "festival", "vocals", "symphony", "chord", "playlist", "composer", "opera", "encore", "stage"}},
	{"weather", []string{"rain", "storm", "wind", "forecast", "snow", "cloud", "temperature", "sunny", "thunder", "humidity",
		"frost", "drought", "flood", "breeze", "hail", "lightning", "fog", "heatwave", "blizzard", "drizzle",
		"pressure", "monsoon", "tornado", "umbrella", "celsius", "gust", "chilly", "showers", "overcast", "warmer"}},
	{"space", []string{"planet", "orbit", "rocket", "telescope", "galaxy", "astronaut", "moon", "star", "mars", "launch",
		"satellite", "comet", "asteroid", "nebula", "cosmic", "gravity", "spacecraft", "solar", "lunar", "mission",
		"universe", "jupiter", "crater", "meteor", "eclipse", "astronomer", "probe", "supernova", "capsule", "nasa"}},
	{"computing", []string{"software", "code", "server", "database", "program", "network", "algorithm", "compiler", "memory", "bug",
		"processor", "laptop", "internet", "password", "browser", "keyboard", "developer", "kernel", "cache", "debug",
		"encryption", "api", "python", "linux", "terminal", "binary", "function", "variable", "backup", "download"}},
	{"health", []string{"doctor", "patient", "hospital", "disease", "vaccine", "treatment", "nurse", "symptoms", "clinic", "surgery",
		"medicine", "virus", "diagnosis", "therapy", "fever", "infection", "prescription", "blood", "heart", "cancer",
		"diabetes", "pharmacy", "antibiotic", "immune", "pain", "recovery", "ward", "illness", "dose", "allergy"}},
	{"finance", []string{"market", "stock", "bank", "investor", "price", "interest", "loan", "profit", "shares", "dividend",
		"inflation", "bond", "currency", "trading", "revenue", "earnings", "debt", "fund", "portfolio", "mortgage",
		"credit", "budget", "tax", "economy", "recession", "broker", "asset", "equity", "valuation", "savings"}},
	{"ocean", []string{"sea", "wave", "coral", "fish", "whale", "tide", "beach", "shark", "reef", "dolphin",
		"sailor", "boat", "harbor", "island", "current", "shell", "octopus", "seaweed", "diver", "submarine",
		"lighthouse", "anchor", "coast", "turtle", "salt", "surf", "plankton", "jellyfish", "lagoon", "voyage"}},
	{"garden", []string{"flower", "seed", "soil", "plant", "tree", "leaf", "rose", "garden", "bloom", "compost",
		"weed", "root", "harvest", "bulb", "shrub", "lawn", "prune", "tulip", "vegetable", "greenhouse",
		"mulch", "orchard", "seedling", "hedge", "fertilizer", "daisy", "petal", "sprout", "watering", "blossom"}},
}

// themeShare is the part of a themed topic's mass on its own theme's words;
// the rest is the topic's Dirichlet(β) draw over the whole vocabulary.
const themeShare = 0.9

// themeVocab checks cfg.Themes against cfg.K and cfg.Vocab, fills them in,
// and returns the vocabulary (nil without themes).
func themeVocab(cfg *LDAConfig) ([]string, error) {
	if cfg.Themes == nil {
		return nil, nil
	}
	if cfg.K == 0 {
		cfg.K = len(cfg.Themes)
	}
	if cfg.K < 1 || cfg.K > len(cfg.Themes) {
		return nil, fmt.Errorf("synth: k=%d topics from %d themes", cfg.K, len(cfg.Themes))
	}
	var vocab []string
	seen := map[string]string{}
	for _, th := range cfg.Themes[:cfg.K] {
		for _, w := range th.Words {
			if other, dup := seen[w]; dup {
				return nil, fmt.Errorf("synth: the word %q is in themes %s and %s", w, other, th.Name)
			}
			seen[w] = th.Name
			vocab = append(vocab, w)
		}
	}
	if cfg.Vocab != 0 && cfg.Vocab != len(vocab) {
		return nil, fmt.Errorf("synth: vocabulary of %d words, but the %d themes hold %d", cfg.Vocab, cfg.K, len(vocab))
	}
	cfg.Vocab = len(vocab)
	return vocab, nil
}

// themeTopic turns topic i, a distribution over the whole vocabulary, into
// one that puts themeShare of its mass on theme i's words, spread by a
// Dirichlet(1) draw.
func themeTopic(r *rand.Rand, topic []float64, themes []Theme, i int) {
	lo := 0
	for _, th := range themes[:i] {
		lo += len(th.Words)
	}
	own := make([]float64, len(themes[i].Words))
	dirichlet(r, own, []float64{1})
	for j := range topic {
		topic[j] *= 1 - themeShare
	}
	for j, p := range own {
		topic[lo+j] += themeShare * p
	}
}
