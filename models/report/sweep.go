package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/streamfit/streamfit/models/lda"
)

// SweepFile is the JSON that `streamfit fit lda --k LIST --json` prints: a
// sweep over k (lda.FitK, lda.FitKStats) and the model file of each k,
// Files[i] holding the model of Scores[i] (as fit was given it: relative
// to the directory fit ran in).
type SweepFile struct {
	lda.Sweep
	Files []string `json:"files,omitempty"`
}

// ReadSweep reads a sweep file and checks it: at least one score, the k
// ascending and distinct, the recommended k one of them (or 0: not
// scored), one file per k when files are listed.
func ReadSweep(path string) (*SweepFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var sf SweepFile
	if err := json.Unmarshal(b, &sf); err != nil {
		return nil, fmt.Errorf("%s: not a sweep file (the JSON of streamfit fit lda --k LIST --json): %w", path, err)
	}
	ks := make([]int, len(sf.Scores))
	for i, s := range sf.Scores {
		ks[i] = s.K
		if s.K < 1 || (i > 0 && s.K <= ks[i-1]) {
			return nil, fmt.Errorf("%s: scores[%d]: k=%d: the k of a sweep file are ascending and at least 1", path, i, s.K)
		}
	}
	switch {
	case len(ks) == 0:
		return nil, fmt.Errorf("%s: no \"scores\": not a sweep file (the JSON of streamfit fit lda --k LIST --json)", path)
	case sf.Recommended != 0 && !slices.Contains(ks, sf.Recommended):
		return nil, fmt.Errorf("%s: the recommended k=%d is not one of the sweep's k %v", path, sf.Recommended, ks)
	case sf.Files != nil && len(sf.Files) != len(ks):
		return nil, fmt.Errorf("%s: %d files for %d k", path, len(sf.Files), len(ks))
	}
	return &sf, nil
}

// ModelFile is the model file of k that the sweep file at path lists, as a
// path from the current directory: as listed when it exists so, else
// relative to the sweep file's directory; "" when the file lists none for
// k.
func (sf *SweepFile) ModelFile(path string, k int) string {
	for i, s := range sf.Scores {
		if s.K != k || i >= len(sf.Files) {
			continue
		}
		f := sf.Files[i]
		if _, err := os.Stat(f); err != nil && !filepath.IsAbs(f) {
			f = filepath.Join(filepath.Dir(path), f)
		}
		return f
	}
	return ""
}

// SweepView is what the page draws of a sweep over k: the held-out
// perplexity against k with the coherence curves beside it, and the
// recommended k marked.
type SweepView struct {
	Source string `json:"source"`
	K      []int  `json:"k"`
	// The scores of each k (empty when the sweep was not scored).
	Perplexity []Num `json:"perplexity,omitempty"`
	UMass      []Num `json:"umass,omitempty"`
	NPMI       []Num `json:"npmi,omitempty"`
	Diversity  []Num `json:"diversity,omitempty"`
	EMPasses   []int `json:"em_passes"`
	// Recommended is the k the sweep's rule (Rule) picks, 0 when it was not
	// scored; Shown the k of the page's model when it is one of K, else 0.
	Recommended int    `json:"recommended"`
	Rule        string `json:"rule,omitempty"`
	HeldOut     string `json:"held_out,omitempty"`
	Shown       int    `json:"shown"`
}

// sweepView reads the sweep file at path for the page of a model of k
// topics.
func sweepView(d *Data, path string, k int) error {
	sf, err := ReadSweep(path)
	if err != nil {
		return err
	}
	v := &SweepView{Source: filepath.Base(path), Recommended: sf.Recommended, Rule: sf.Rule, HeldOut: sf.HeldOut}
	scored := sf.Recommended != 0
	for _, s := range sf.Scores {
		v.K = append(v.K, s.K)
		v.EMPasses = append(v.EMPasses, s.EMPasses)
		if s.K == k {
			v.Shown = k
		}
		if !scored {
			continue
		}
		v.Perplexity = append(v.Perplexity, Num(s.Perplexity))
		v.UMass = append(v.UMass, Num(s.UMass))
		v.NPMI = append(v.NPMI, Num(s.NPMI))
		v.Diversity = append(v.Diversity, Num(s.Diversity))
		if s.K == k {
			// The page's model was scored by the sweep: its figures open
			// the page.
			src := fmt.Sprintf("the sweep %s (held out: %s)", v.Source, sf.HeldOut)
			for _, f := range []struct {
				key string
				v   float64
			}{{"perplexity", s.Perplexity}, {"umass", s.UMass}, {"npmi", s.NPMI}, {"diversity", s.Diversity}} {
				d.score(f.key, f.v, src)
			}
		}
	}
	if v.Shown == 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("The model shown has k=%d, which is not one of the k of the sweep %s (%v).", k, v.Source, v.K))
	}
	if !scored {
		d.Notes = append(d.Notes, fmt.Sprintf("The sweep %s was not scored (no held-out documents): its curves show no perplexity or coherence, and no k is recommended.", v.Source))
	}
	d.Sweep = v
	return nil
}
