package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// evalFigures reads an evaluation file (the JSON `streamfit eval --json`
// prints) and adds what it holds to the page. The file is one JSON object;
// its shape is read loosely so that any evaluation streamfit prints fits:
//
//   - a number (at the top or inside an object, e.g. {"heldout":
//     {"perplexity": 934.2}}) is listed with the provenance as
//     "evaluation (FILE): heldout.perplexity";
//   - an array of k numbers (e.g. {"coherence": {"umass": […], "npmi": […]}})
//     is a per-topic (per-component) figure: a column of the topic table,
//     or bars for a dense model;
//   - an array of k objects (e.g. {"topics": [{"umass": -1.2, "npmi": 0.1}, …]})
//     gives one per-topic figure per numeric field;
//   - anything else (strings, arrays of another length) is left out, and a
//     note says which arrays did not have k values.
//
// topics says whether d shows a topic model, modelPath is its file. The
// evaluation of another model is refused: one whose EvalModelKey is not
// the SHA-256 of the model file, whose "k" is not the model's, or whose
// "model" names another existing file. So is a figure an evaluation
// prints that is not a number ({"perplexity": "abc"}).
func evalFigures(d *Data, path, modelPath string, k int, topics bool) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		return fmt.Errorf("%s: not an evaluation file (a JSON object, as an evaluation writes it): %w", path, err)
	}
	if err := sameModel(root, path, modelPath, k); err != nil {
		return err
	}
	delete(root, EvalModelKey)
	for key, v := range root {
		if _, num := v.(float64); !num && evalNumbers[key] {
			return fmt.Errorf("%s: %q is %v, not a number: not an evaluation streamfit wrote", path, key, v)
		}
	}
	var figs []Figure
	var skipped []string
	var walk func(prefix string, v any, depth int)
	walk = func(name string, v any, depth int) {
		switch v := v.(type) {
		case float64:
			d.prov("evaluation ("+filepath.Base(path)+"): "+words(name), fmtNum(v))
			d.score(name, v, scoreSource(root, name, filepath.Base(path)))
		case map[string]any:
			if depth >= 3 {
				return
			}
			for _, key := range slices.Sorted(maps.Keys(v)) {
				walk(joinName(name, key), v[key], depth+1)
			}
		case []any:
			if vals, ok := numbers(v); ok {
				if len(vals) == k {
					figs = append(figs, Figure{Name: words(name), About: figureAbout[name], Value: nums(vals)})
				} else {
					skipped = append(skipped, fmt.Sprintf("%s (%d values)", name, len(vals)))
				}
				return
			}
			if cols, ok := objectColumns(v); ok {
				if len(v) != k {
					skipped = append(skipped, fmt.Sprintf("%s (%d entries)", name, len(v)))
					return
				}
				for _, key := range slices.Sorted(maps.Keys(cols)) {
					figs = append(figs, Figure{Name: words(joinName(name, key)), About: figureAbout[key], Value: nums(cols[key])})
				}
			}
		}
	}
	walk("", root, 0)
	if len(skipped) > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%s: not shown, as they do not have one value per topic (k=%d): %s.", path, k, strings.Join(skipped, ", ")))
	}
	if topics {
		d.Topics.Figures = append(d.Topics.Figures, figs...)
		return nil
	}
	for _, f := range figs {
		vals := make([]float64, len(f.Value))
		for i, x := range f.Value {
			vals[i] = float64(x)
		}
		d.Panels = append(d.Panels, bars("Evaluation: "+f.Name, "From "+path+".", labels("component ", k), vals))
	}
	return nil
}

// scoreSource says where a score at key of an evaluation file (root, named
// base) comes from: the file, and the documents and top words it counted
// when the file says so at its top level.
func scoreSource(root map[string]any, key, base string) string {
	docs, ok := root["docs"].(float64)
	switch {
	case !ok || strings.Contains(key, "."):
		return base
	case key == "perplexity":
		return fmt.Sprintf("%s: %d held-out documents", base, int64(docs))
	}
	if top, ok := root["top"].(float64); ok {
		return fmt.Sprintf("%s: top %d words of each topic, %d documents", base, int(top), int64(docs))
	}
	return fmt.Sprintf("%s: %d documents", base, int64(docs))
}

func joinName(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// numbers returns v as numbers when every entry is a number or null (NaN).
func numbers(v []any) ([]float64, bool) {
	out := make([]float64, len(v))
	for i, x := range v {
		switch x := x.(type) {
		case float64:
			out[i] = x
		case nil:
			out[i] = math.NaN()
		default:
			return nil, false
		}
	}
	return out, len(v) > 0
}

// objectColumns turns an array of objects into one column per numeric
// field (NaN where an object lacks it).
func objectColumns(v []any) (map[string][]float64, bool) {
	cols := map[string][]float64{}
	for i, x := range v {
		obj, ok := x.(map[string]any)
		if !ok {
			return nil, false
		}
		for key, val := range obj {
			f, ok := val.(float64)
			if !ok {
				continue
			}
			c, seen := cols[key]
			if !seen {
				c = make([]float64, len(v))
				for j := range c {
					c[j] = math.NaN()
				}
				cols[key] = c
			}
			c[i] = f
		}
	}
	return cols, len(cols) > 0
}

// EvalModelKey is the field of an evaluation file (eval --json) holding the
// SHA-256 of the model file it evaluated, in hexadecimal.
const EvalModelKey = "model_sha256"

// FileSHA256 returns the SHA-256 of the file at path, in hexadecimal.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sameModel refuses an evaluation (root, read from path) of another model
// than the one at modelPath, with k components.
func sameModel(root map[string]any, path, modelPath string, k int) error {
	if sum, ok := root[EvalModelKey].(string); ok {
		if mine, err := FileSHA256(modelPath); err == nil && mine != sum {
			return fmt.Errorf("%s is the evaluation of another model: its model file's SHA-256 is %.12s…, %s's is %.12s… (evaluate this model with streamfit eval --json)", path, sum, modelPath, mine)
		}
	}
	if n, ok := root["k"].(float64); ok && int(n) != k {
		return fmt.Errorf("%s is the evaluation of a model of k=%v, but %s has k=%d", path, n, modelPath, k)
	}
	if other, ok := root["model"].(string); ok {
		a, errA := os.Stat(other)
		b, errB := os.Stat(modelPath)
		if errA == nil && errB == nil && !os.SameFile(a, b) {
			return fmt.Errorf("%s is the evaluation of %s, not of %s", path, other, modelPath)
		}
	}
	return nil
}

// evalNumbers are the top-level figures streamfit's evaluations print
// (eval --json: against the truth, --heldout, --coherence), which must be
// numbers.
var evalNumbers = map[string]bool{
	"k": true, "truth_k": true, "mean_l1": true, "max_l1": true, "found": true, "alpha_rel_err": true,
	"docs": true, "skipped": true, "observed_tokens": true, "predicted_tokens": true,
	"log_likelihood": true, "perplexity": true, "smooth": true, "umass": true, "npmi": true,
}
