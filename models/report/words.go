package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// fieldWords name, in words, the fields of model files and evaluation files
// that the page lists; a field not named here is shown with its
// underscores as spaces.
var fieldWords = map[string]string{
	// The fit record (models.FitRecord) and its EM record.
	"em":                      "EM refinement",
	"passes":                  "passes",
	"bounds":                  "training bound per token, by pass",
	"converged":               "converged",
	"tol":                     "tolerance",
	"fit_alpha":               "topic weights re-estimated",
	"eta":                     "topic pseudo-count η",
	"online":                  "online EM",
	"sample":                  "document sample",
	"rate":                    "share of the documents",
	"held_out":                "held-out bound per token, by pass",
	"undone":                  "last sample pass undone",
	"sketch_tail":             "sketch tail (its last singular value over the k-th)",
	"whitened_m2_eigenvalues": "whitened second-moment eigenvalues",
	// The fit's plan (lda.PlanRecord).
	"third":  "third moment held as",
	"auto":   "chosen automatically",
	"reason": "why",
	"solver": "solver",
	// Evaluations (eval --json).
	"docs":             "documents",
	"skipped":          "documents skipped",
	"observed_tokens":  "observed tokens",
	"predicted_tokens": "predicted tokens",
	"log_likelihood":   "log-likelihood",
	"perplexity":       "perplexity",
	"smooth":           "topic smoothing",
	"umass":            "UMass coherence",
	"npmi":             "NPMI coherence",
	"diversity":        "topic diversity",
	"top":              "top words scored",
	"truth_k":          "k of the truth",
	"mean_l1":          "mean ℓ1 distance to the truth",
	"max_l1":           "largest ℓ1 distance to the truth",
	"found":            "true topics found",
	"alpha_rel_err":    "relative error of α",
	"topic_umass":      "UMass",
	"topic_npmi":       "NPMI",
}

// words names a field (or a dotted path of fields) in words.
func words(key string) string {
	parts := strings.Split(key, ".")
	for i, p := range parts {
		if w, ok := fieldWords[p]; ok {
			parts[i] = w
		} else {
			parts[i] = strings.ReplaceAll(p, "_", " ")
		}
	}
	return strings.Join(parts, ": ")
}

// figureAbout explains the per-topic figures an evaluation prints.
var figureAbout = map[string]string{
	"topic_umass": "UMass coherence of the topic's top words (Mimno et al.): at most 0, closer to 0 is more coherent",
	"topic_npmi":  "NPMI coherence of the topic's top words (Bouma): from −1 to 1, higher is more coherent",
}

// readable writes a value decoded from JSON for a person: numbers with 4
// significant digits, true and false as yes and no, a long list of numbers
// by its first and last values, an object as "name: value" pairs.
func readable(v any) string {
	switch v := v.(type) {
	case nil:
		return "–"
	case float64:
		return fmtNum(v)
	case bool:
		if v {
			return "yes"
		}
		return "no"
	case string:
		return v
	case []any:
		if vals, ok := numbers(v); ok {
			if len(vals) <= 6 {
				s := make([]string, len(vals))
				for i, x := range vals {
					s[i] = fmtNum(x)
				}
				return strings.Join(s, ", ")
			}
			return fmt.Sprintf("%d values, first %s, last %s", len(vals), fmtNum(vals[0]), fmtNum(vals[len(vals)-1]))
		}
		return fmt.Sprintf("%d entries", len(v))
	case map[string]any:
		var s []string
		for _, key := range slices.Sorted(maps.Keys(v)) {
			s = append(s, words(key)+": "+readable(v[key]))
		}
		return strings.Join(s, "; ")
	}
	return fmt.Sprint(v)
}

// readableJSON is readable for a value of Go, through its JSON.
func readableJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var x any
	if json.Unmarshal(b, &x) != nil {
		return string(b)
	}
	return readable(x)
}

// Warning is one of the fit's doubts, said for the person reading the
// page: what it means for them and what to try, with the fit's own words
// (Detail) kept for whoever wants them.
type Warning struct {
	Title   string   `json:"title"`
	Meaning string   `json:"meaning"`
	Try     []string `json:"try,omitempty"`
	Detail  string   `json:"detail"`
}

// explanations are the warnings a fit writes (models/lda's diagnose and
// fit, models.Convergence), recognised by a phrase of theirs, in plain
// words. The first that matches explains a warning.
var explanations = []struct {
	phrase string
	w      Warning
}{
	{"spectral topics, not k=", Warning{
		Title:   "The data hold fewer clear topics than you asked for",
		Meaning: "Only some of the topics could be read directly from the data; the others were made by splitting the largest ones, and the EM passes then pulled them apart. Some of them may be near-copies of each other.",
		Try: []string{"Look for topics with nearly the same words in the table below; if there are several, a smaller k gives cleaner topics.",
			"More documents let the data support more topics."},
	}},
	{"the data depart from the model", Warning{
		Title:   "The first estimate of the topics needed large corrections",
		Meaning: "Real text never follows the topic model exactly, and here it departs from it enough that the quick first estimate of the topics had to be corrected. The EM passes that follow it refine the topics; the scores at the top of the page say how good the result is.",
		Try: []string{"Fit a smaller k and compare the held-out perplexity and coherence: if they are as good or better, the smaller model is the better one.",
			"Drop words that appear in most documents (vocab build --max-df 0.5) and very rare ones (--min-df): they blur the topics.",
			"More EM passes (fit lda --em-passes) let the refinement go further."},
	}},
	{"barely decays", Warning{
		Title:   "The data's summary may not separate the topics well",
		Meaning: "The fit first compresses the data to a small summary; here that summary kept little beyond the topics themselves, so the topics may be estimated roughly.",
		Try:     []string{"Another power pass over the data (fit lda --power-iters) usually fixes it.", "More documents also help."},
	}},
	{"eigenvalues of the second moment are below", Warning{
		Title:   "Some topics are weakly supported by the data",
		Meaning: "The data show clear evidence for fewer topics than k; the weakest topics may be noise.",
		Try:     []string{"Try the smaller k the detail below suggests, and compare the scores at the top of the page."},
	}},
	{"moved by the projection onto the simplex", Warning{
		Title:   "Some topics were estimated poorly",
		Meaning: "The topics listed in the detail needed large corrections to become word distributions: they may be spurious, a mixture of several themes or noise.",
		Try:     []string{"Check those topics' words in the table below.", "A smaller k often removes them."},
	}},
	{"may be spurious", Warning{
		Title:   "Some topics may be spurious",
		Meaning: "The topic weights do not add up as the model expects, which happens when k is larger than the number of themes in the data.",
		Try:     []string{"Try a smaller k and compare the scores at the top of the page."},
	}},
	{"its answer is used", Warning{
		Title:   "The solver stopped before it settled",
		Meaning: "The decomposition at the heart of the fit reached its iteration limit; its answer is used, but it may be less accurate than it could be.",
		Try:     []string{"Allow more iterations (fit --iters), try another solver (fit --solver), or a smaller k."},
	}},
}

// explain turns a warning of the fit into plain words; a warning the page
// does not know keeps its own words as the meaning.
func explain(detail string) Warning {
	for _, e := range explanations {
		if strings.Contains(detail, e.phrase) {
			w := e.w
			w.Detail = detail
			return w
		}
	}
	return Warning{Title: "The fit noted a possible problem", Meaning: detail, Detail: detail}
}

// Score is one of the figures a person judges a model by (held-out
// perplexity, coherence, diversity), shown at the top of the page.
type Score struct {
	Name  string `json:"name"`
	Value Num    `json:"value"`
	// About says how to read it ("lower is better").
	About string `json:"about"`
	// Source names where it comes from (an evaluation file, held-out documents).
	Source string `json:"source"`
	rank   int    // place among the scores (scoreOf)
}

// scoreOf describes the scores an evaluation prints, by their key, in the
// order the page shows them.
var scoreOf = map[string]struct {
	rank        int
	name, about string
}{
	"perplexity": {0, "held-out perplexity", "how surprised the model is by documents it did not see: lower is better"},
	"umass":      {2, "coherence (UMass)", "how often the topics' top words occur together, mean over topics: at most 0, closer to 0 is better"},
	"npmi":       {1, "coherence (NPMI)", "how much more than by chance the topics' top words occur together, mean over topics: from −1 to 1, higher is better"},
	"diversity":  {3, "topic diversity", "share of distinct words among all topics' top words: 1 when no two topics share one, higher is better"},
}

// score adds the figure at key (a dotted path) to the page's scores when
// it is one a person looks for first.
func (d *Data) score(key string, v float64, source string) {
	last := key[strings.LastIndex(key, ".")+1:]
	s, ok := scoreOf[last]
	if !ok {
		return
	}
	sc := Score{Name: s.name, Value: Num(v), About: s.about, Source: source, rank: s.rank}
	i, _ := slices.BinarySearchFunc(d.Scores, sc, func(a, b Score) int { return cmp.Compare(a.rank, b.rank+1) })
	d.Scores = slices.Insert(d.Scores, i, sc)
}
