package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
)

// Options name what Build shows beside the model.
type Options struct {
	// Vocab holds the words of a topic model that does not carry them
	// (length d); nil shows term ids unless the model has a vocabulary.
	Vocab []string
	// ThetaPath names a document–topic table (see ReadTheta); empty for none.
	ThetaPath string
	// ThetaID names the document id column of ThetaPath ("" tries "doc" and
	// "id", then reads every numeric column as a share).
	ThetaID string
	// EvalPaths name evaluation files: the JSON of `streamfit eval --json`
	// (held-out perplexity, coherence, …), read as evalFigures says.
	EvalPaths []string
	// HeldOut names held-out documents (any format stream.Open reads) on
	// which a topic model's document-completion perplexity is computed, as
	// `streamfit eval --heldout` does (lda.Perplexity), and listed.
	HeldOut string
	// SweepPath names a sweep file (ReadSweep) whose curves over k the
	// page of a topic model shows; empty for none.
	SweepPath string
	// Workers bounds the goroutines reading ThetaPath (0: GOMAXPROCS).
	Workers int
}

// Data is everything the page shows, embedded in it as JSON.
type Data struct {
	Title string `json:"title"`
	// Kind is the model's name ("lda", "gmm", …).
	Kind string `json:"kind"`
	// Summary is one line under the title.
	Summary string `json:"summary"`
	// Notes say what the page cannot show and why.
	Notes []string `json:"notes,omitempty"`
	// Scores are the figures a person judges the model by (held-out
	// perplexity, coherence, diversity), from the evaluations and held-out
	// documents given; the page opens with them.
	Scores []Score `json:"scores,omitempty"`
	// NoScores, set for a topic model without Scores, says how to get them.
	NoScores string `json:"no_scores,omitempty"`
	// Warnings are the fit's own doubts, from the model file, in plain
	// words (explain).
	Warnings []Warning `json:"warnings,omitempty"`
	// Provenance lists how the model was made, as name–value pairs.
	Provenance [][2]string `json:"provenance"`
	// Sweep, when set, is the sweep over k the model came from
	// (Options.SweepPath).
	Sweep *SweepView `json:"sweep,omitempty"`
	// Topics is set for topic models.
	Topics *TopicView `json:"topics,omitempty"`
	// Panels are the page's other charts, in order.
	Panels []Panel `json:"panels,omitempty"`
}

func (d *Data) prov(name, value string) {
	d.Provenance = append(d.Provenance, [2]string{name, value})
}

// warn adds the fit's warnings to d, explained.
func (d *Data) warn(ws []string) {
	for _, w := range ws {
		d.Warnings = append(d.Warnings, explain(w))
	}
}

// Num is a number written with 4 significant digits (NaN and ±Inf as
// null): the page draws bars and colours, and a short number keeps it small.
type Num float64

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) { return short(float64(n), 4), nil }

// Num6 is a number written with 6 significant digits: the word
// probabilities the page ranks words by.
type Num6 float64

// MarshalJSON implements json.Marshaler.
func (n Num6) MarshalJSON() ([]byte, error) { return short(float64(n), 6), nil }

// short writes f with digits significant digits, NaN and ±Inf as null.
func short(f float64, digits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null")
	}
	return strconv.AppendFloat(nil, f, 'g', digits, 64)
}

func nums(v []float64) []Num {
	out := make([]Num, len(v))
	for i, x := range v {
		out[i] = Num(x)
	}
	return out
}

// fmtNum writes x with 4 significant digits, or whole when it is an
// integer below 10¹⁵ (counts).
func fmtNum(x float64) string { return models.FormatNum(x) }

// Kind reads the "model" field of a model file.
func Kind(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	// The field comes first in streamfit's model files: the tokens before it
	// are walked, a large topic matrix after it is never read.
	dec := json.NewDecoder(f)
	var head struct{ Model string }
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", fmt.Errorf("%s: not a model file (not a JSON object)", path)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", fmt.Errorf("%s: not a model file: %w", path, err)
		}
		if t == "model" {
			if err := dec.Decode(&head.Model); err != nil {
				return "", fmt.Errorf("%s: \"model\" is not a string: %w", path, err)
			}
			break
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", fmt.Errorf("%s: not a model file: %w", path, err)
		}
	}
	if head.Model == "" {
		return "", fmt.Errorf("%s: no \"model\" field; not a streamfit model file", path)
	}
	return head.Model, nil
}

// ErrNotApplicable is wrapped by Build's errors for a companion file that
// does not apply to the model's kind (a document–topic table for a GMM).
var ErrNotApplicable = errors.New("does not apply to this model")

// Build reads the model at path and what o names beside it, and returns
// the page's data. Its cost is that of reading the model plus, for a topic
// model, O(k²·d) for the topic distances and O(k·d log d) for the candidate
// words; the document–topic table is streamed.
func Build(ctx context.Context, path string, o Options) (*Data, error) {
	name, err := Kind(path)
	if err != nil {
		return nil, err
	}
	d := &Data{Kind: name, Title: filepath.Base(path)}
	k, dim, err := d.page(ctx, path, name, o)
	if err != nil {
		return nil, err
	}
	d.Summary = fmt.Sprintf("%s model, k = %d, d = %d", name, k, dim)
	d.Provenance = append([][2]string{{"model file", path}}, d.Provenance...)
	return d, nil
}

// page fills d with the page of the model file at path, of the kind
// called name, and returns the model's k and d.
func (d *Data) page(ctx context.Context, path, name string, o Options) (k, dim int, err error) {
	kind, err := models.Lookup(name)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: a %q model: no report knows how to show it (it shows %s models)", path, name, strings.Join(models.Names(nil), ", "))
	}
	f, err := kind.Read(path)
	if err != nil {
		return 0, 0, err
	}
	if m, ok := f.(*models.Model); ok {
		return m.K, m.D, topicPage(ctx, d, path, m, o)
	}
	switch s, ok := f.(models.Reported); {
	case !ok:
		return 0, 0, fmt.Errorf("%s: a %q model: no report knows how to show it", path, name)
	case o.ThetaPath != "":
		return 0, 0, fmt.Errorf("%s: a document–topic table %w (a %q model)", o.ThetaPath, ErrNotApplicable, name)
	case o.Vocab != nil:
		return 0, 0, fmt.Errorf("a vocabulary %w (a %q model)", ErrNotApplicable, name)
	case o.SweepPath != "":
		return 0, 0, fmt.Errorf("%s: a sweep over the number of topics %w (a %q model)", o.SweepPath, ErrNotApplicable, name)
	default:
		sec := s.Section()
		d.section(sec)
		if o.HeldOut != "" {
			d.Notes = append(d.Notes, fmt.Sprintf("%s: held-out documents are scored for topic models only, not %s.", o.HeldOut, name))
		}
		for _, p := range o.EvalPaths {
			if err := evalFigures(d, p, path, sec.K, false); err != nil {
				return 0, 0, err
			}
		}
		return sec.K, sec.D, nil
	}
}

// topicPage fills d for a topic model.
func topicPage(ctx context.Context, d *Data, path string, m *models.Model, o Options) error {
	vocab := m.Vocab
	if o.Vocab != nil {
		if len(o.Vocab) != m.D {
			return fmt.Errorf("the vocabulary has %d words but the model has d=%d", len(o.Vocab), m.D)
		}
		vocab = o.Vocab
	}
	if vocab == nil {
		d.Notes = append(d.Notes, "The model carries no vocabulary and none was given: words are shown as term ids (#id).")
	}
	v := topicView(m, vocab)
	d.Topics = v
	topicsLabels := labels("topic ", m.K)
	d.Panels = append(d.Panels, bars("Topic weights α", "The Dirichlet parameter of each topic (its weight for the single-topic model); the map's circle areas are α/α₀.", topicsLabels, m.Alpha))
	if o.ThetaPath != "" {
		th, err := ReadTheta(ctx, o.ThetaPath, o.ThetaID, m.K, o.Workers)
		if err != nil {
			return err
		}
		d.Panels = append(d.Panels,
			bars("Documents by dominant topic", fmt.Sprintf("%d documents of %s, each counted under the topic with its largest share.", th.Docs, filepath.Base(o.ThetaPath)), topicsLabels, th.Dominant),
			bars("Mean topic share of the documents", "The average of each topic's share over the documents; compare with the weights α/α₀ the fit assumed.", topicsLabels, th.Mean))
		fig, _ := figureOf("documents", "documents whose largest share is this topic", th.Dominant, m.K)
		v.Figures = append(v.Figures, fig)
	}
	if f := m.Fit; f != nil {
		if len(f.ProjectionL1) == m.K {
			fig, _ := figureOf("projection ℓ1", "ℓ1 mass moved by projecting the raw estimate onto the simplex: large values flag a topic the data fit poorly", f.ProjectionL1, m.K)
			v.Figures = append(v.Figures, fig)
		}
		topicProvenance(d, m)
	} else {
		d.Notes = append(d.Notes, "The model file records no fit (a truth file, or written by another tool): no provenance to show.")
	}
	for _, p := range o.EvalPaths {
		if err := evalFigures(d, p, path, m.K, true); err != nil {
			return err
		}
	}
	if o.HeldOut != "" {
		if err := heldOut(ctx, d, m, o); err != nil {
			return err
		}
	}
	if o.SweepPath != "" {
		if err := sweepView(d, o.SweepPath, m.K); err != nil {
			return err
		}
	}
	if len(d.Scores) == 0 {
		d.NoScores = "No held-out perplexity or coherence was given. Score the model with streamfit eval --model MODEL --heldout HELDOUT --json > heldout.json (and --coherence CORPUS for coherence), then add --eval heldout.json to streamfit report, or give --heldout to it."
	}
	return nil
}

// heldOut scores the held-out documents of o.HeldOut with m's topics
// (document completion, as eval --heldout) and lists the figures.
func heldOut(ctx context.Context, d *Data, m *models.Model, o Options) error {
	src, err := stream.Open(o.HeldOut, stream.Options{Workers: o.Workers})
	if err != nil {
		return err
	}
	defer stream.Close(src)
	h, err := lda.Perplexity(ctx, src, m.Topics, m.Alpha, lda.ScoreOptions{Single: m.Model == lda.TopicKind.Name(), Workers: o.Workers})
	if err != nil {
		return fmt.Errorf("%s: %w", o.HeldOut, err)
	}
	name := "held-out (" + filepath.Base(o.HeldOut) + ")"
	d.prov(name+": perplexity", fmtNum(h.Perplexity))
	d.score("perplexity", h.Perplexity, fmt.Sprintf("%d held-out documents of %s", h.Docs, filepath.Base(o.HeldOut)))
	d.prov(name+": documents scored", fmt.Sprint(h.Docs))
	d.prov(name+": observed / predicted tokens", fmt.Sprintf("%d / %d (document completion, topics smoothed by %g)", h.Observed, h.Predicted, h.Smooth))
	return nil
}

// topicProvenance lists a topic model's fit record.
func topicProvenance(d *Data, m *models.Model) {
	f := m.Fit
	d.prov("α₀", fmtNum(m.Alpha0))
	// The model file does not keep the input's name; what it knows of it:
	in := fmt.Sprintf("%d documents, %d tokens, %d-word vocabulary", f.Docs, f.Tokens, m.D)
	if f.Skipped > 0 {
		in += fmt.Sprintf(" (%d documents skipped: too short)", f.Skipped)
	}
	d.prov("input", in)
	d.prov("passes", strconv.Itoa(f.Passes))
	if f.Seconds > 0 {
		d.prov("seconds", fmtNum(f.Seconds))
	} else {
		d.prov("seconds", "not recorded (timing turned off)")
	}
	d.prov("seed", strconv.FormatUint(f.Seed, 10))
	d.prov("whitening", f.Whitening)
	if f.Plan != nil {
		d.prov("plan", readableJSON(f.Plan))
	}
	s := f.Solver
	d.prov("solver", fmt.Sprintf("%s, %d restarts, %d iterations, converged: %t", s.Name, s.Restarts, s.Iters, s.Converged))
	d.prov("eigen-residual", fmtNum(s.EigResidual))
	if s.Residual != nil {
		d.prov("tensor residual", fmtNum(*s.Residual))
	}
	if n := len(f.M2Eigenvalues); n > 0 {
		d.prov("second-moment eigenvalues", fmt.Sprintf("%d, largest %s, smallest %s", n, fmtNum(f.M2Eigenvalues[0]), fmtNum(f.M2Eigenvalues[n-1])))
	}
	d.warn(f.Warnings)
	extraFit(d, f)
}

// shownFit are the fit record's fields topicProvenance shows by name.
var shownFit = map[string]bool{"docs": true, "skipped": true, "tokens": true, "passes": true,
	"seconds": true, "seed": true, "whitening": true, "plan": true, "solver": true,
	"m2_eigenvalues": true, "projection_l1": true, "warnings": true}

// extraFit lists the fit record's other fields, named in words and written
// readably (an object one row per field), so that what a fit records (a
// refinement's passes and bounds, sketch diagnostics) reaches the page
// without the page knowing it.
func extraFit(d *Data, f *models.FitRecord) {
	b, err := json.Marshal(f)
	if err != nil {
		return
	}
	var all map[string]json.RawMessage
	if json.Unmarshal(b, &all) != nil {
		return
	}
	for _, key := range slices.Sorted(maps.Keys(all)) {
		if shownFit[key] {
			continue
		}
		var v any
		if json.Unmarshal(all[key], &v) != nil {
			continue
		}
		if obj, ok := v.(map[string]any); ok {
			for _, sub := range slices.Sorted(maps.Keys(obj)) {
				d.prov(words(key)+": "+words(sub), readable(obj[sub]))
			}
			continue
		}
		d.prov(words(key), readable(v))
	}
}
