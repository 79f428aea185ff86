package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"

	"github.com/streamfit/streamfit/stream"
)

// Model is a fitted topic model as written to model.json. Its field names match
// those of a generated corpus's truth file, so a truth file reads as a Model.
type Model struct {
	// Model names the model: "lda" or "topic" (single topic per document).
	Model string `json:"model"`
	K     int    `json:"k"`
	D     int    `json:"d"`
	// Alpha0 is the Dirichlet concentration α₀ the fit assumed (0 for "topic").
	Alpha0 float64 `json:"alpha0"`
	// Alpha holds the Dirichlet parameters (LDA) or topic weights (single topic),
	// one per topic, in the order of Topics.
	Alpha []float64 `json:"alpha"`
	// Topics has K rows of length D, each a distribution over the vocabulary.
	Topics [][]float64 `json:"topics"`
	// Vocab holds the words when the source knew them (length D).
	Vocab []string `json:"vocab,omitempty"`
	// Fit describes how the model was fitted (absent in truth files).
	Fit *FitRecord `json:"fit,omitempty"`
}

// FitRecord records what a fit saw and did.
type FitRecord struct {
	Docs    int64 `json:"docs"`
	Skipped int64 `json:"skipped"`
	Tokens  int64 `json:"tokens"`
	Passes  int   `json:"passes"`
	// Seconds is the wall time of the fit; it is the one field that differs
	// between runs, and is left out when zero (streamfit fit --no-timing).
	Seconds float64 `json:"seconds,omitempty"`
	Seed    uint64  `json:"seed"`
	// Whitening is "exact" (dense eigendecomposition) or "randomized".
	Whitening string `json:"whitening"`
	// M2Eigenvalues are the top-k eigenvalues of the (corrected) second moment
	// within the whitening's span, measured in the third-moment pass (or in
	// the power pass, with PairFromPower), largest first; their spread is
	// the conditioning of the fit, and a last one tiny against the first
	// flags a topic the data barely support.
	M2Eigenvalues []float64 `json:"m2_eigenvalues"`
	// PairFromPower reports that the second moment on the whitening's
	// span (Ê2·W) came from the sums of the power pass, whose span holds W,
	// rather than being summed again by the third-moment pass: the same
	// quantity to rounding, at a third less work a document entry there.
	PairFromPower bool `json:"pair_from_power,omitempty"`
	// PowerFused reports that the power pass gathered the third moment's
	// statistics too, over its basis, and the cubes were summed from the
	// cube sample's documents it kept in memory: one pass over the data
	// for the two (Passes counts one).
	PowerFused bool `json:"power_fused,omitempty"`
	// SketchTail is, for the randomized whitening, the last singular value
	// of the first pass's sketch M̂2·Ω over its k-th: near 1 when the extra
	// columns found no decay beyond the k-th direction, so the sketch may
	// span the topics poorly (a power pass helps); 0 for exact whitening.
	SketchTail float64 `json:"sketch_tail,omitempty"`
	// WhitenedM2Eigenvalues are the eigenvalues of WᵀM̂2W measured in the
	// third-moment pass for the first pass's whitening W (largest first),
	// before the exact re-whitening: all 1 for the exact whitening; their
	// spread shows how far the sketch's scale was off.
	WhitenedM2Eigenvalues []float64 `json:"whitened_m2_eigenvalues,omitempty"`
	// ProjectionL1 is, per topic, the ℓ1 mass moved by projecting the raw
	// estimate onto the simplex (large values flag a poorly estimated topic).
	ProjectionL1 []float64    `json:"projection_l1,omitempty"`
	Solver       SolverRecord `json:"solver"`
	// CubeSample records the sample of the documents whose cubes the
	// third moment summed, when it was not every document.
	CubeSample *CubeSample `json:"cube_sample,omitempty"`
	// Plan is how the fit held its third moment and what it predicted (an
	// lda.Plan for lda/topic fits; read back as a JSON object).
	Plan any `json:"plan,omitempty"`
	// Warnings describe doubts about the fit that did not stop it (also
	// printed on stderr by the command line).
	Warnings []string `json:"warnings,omitempty"`
	// EM records the likelihood refinement after the spectral fit, when
	// there was one.
	EM *EMRecord `json:"em,omitempty"`
}

// EMRecord records the variational EM passes that refined a spectral fit.
type EMRecord struct {
	Passes int `json:"passes"`
	// Bounds holds, per pass, the training bound per token (the evidence
	// lower bound of the documents plus the topics' log prior, over the
	// tokens) of the parameters the pass started from: non-decreasing.
	Bounds []float64 `json:"bounds"`
	// Converged says the last pass improved the bound by less than Tol
	// (relatively); otherwise the pass cap ended the refinement.
	Converged bool    `json:"converged"`
	Tol       float64 `json:"tol"`
	// FitAlpha says the Dirichlet parameters (topic weights) were
	// re-estimated; Eta is the pseudo-count of the topics' M-step.
	FitAlpha bool    `json:"fit_alpha"`
	Eta      float64 `json:"eta"`
	// Online says the passes were online EM's (an M-step per mini-batch)
	// rather than batch EM's.
	Online bool `json:"online,omitempty"`
	// Sample records the first passes' sample of the documents, when the
	// corpus was larger than the sample (nil: every pass read every
	// document).
	Sample *EMSample `json:"sample,omitempty"`
}

// EMSample describes the seeded sample of documents the first EM passes of
// a large corpus ran on.
type EMSample struct {
	// Rate is the share of the documents in the sample.
	Rate float64 `json:"rate"`
	// Passes counts the passes on the sample, the first Passes of
	// EMStats.Passes; the others read every document.
	Passes int `json:"passes"`
	// HalfPasses counts the first of those that ran on half of the
	// sample (its first half: every other batch of it).
	HalfPasses int `json:"half_passes,omitempty"`
	// HeldOut holds, per pass on the sample, the bound per token of a
	// disjoint held-out sample under the parameters the pass started from;
	// Undone says the last pass on the sample lowered it and its M-step
	// was undone.
	HeldOut []float64 `json:"held_out,omitempty"`
	Undone  bool      `json:"undone,omitempty"`
	// FullGain is the sample's learning curve's prediction, where its
	// passes ended, of the relative rise of the held-out bound the passes
	// over every document would bring; below the fit's threshold they did
	// not run.
	FullGain *float64 `json:"full_gain,omitempty"`
}

// CubeSample describes the seeded sample of documents whose cubes a topic
// model's third moment summed (each weighted by 1/Rate), and what it cost
// in accuracy against what the model leaves unexplained.
type CubeSample struct {
	// Rate is the share of the documents in the sample.
	Rate float64 `json:"rate"`
	// StdErr is the standard error the sample adds to the whitened third
	// moment, relative to that moment's Frobenius norm; compare it with
	// the solver's relative residual (SolverRecord.Residual), the model's
	// misfit to the same moment: independent errors add in quadrature, so
	// one below a quarter of the residual moves the total by under 3%.
	StdErr float64 `json:"std_err"`
	// Redone says the sample was chosen by the fit and its error proved
	// too large against the residual (or its solve failed), so one more
	// pass summed every document's cubes; the model is from that pass.
	Redone bool `json:"redone,omitempty"`
}

// SolverRecord are the tensor decomposition's diagnostics.
type SolverRecord struct {
	Name     string `json:"name"`
	Restarts int    `json:"restarts"`
	Iters    int    `json:"iters"`
	// Eigenvalues are the tensor eigenvalues λ of the topics, in topic order.
	Eigenvalues []float64 `json:"eigenvalues"`
	// Residual is ‖T − Σλv⊗3‖_F/‖T‖_F, when known.
	Residual    *float64 `json:"residual,omitempty"`
	EigResidual float64  `json:"eig_residual"`
	Converged   bool     `json:"converged"`
}

// Validate checks the model's shape: K topics of length D summing to 1 within
// 1e-6, K weights (positive for LDA's Dirichlet, at least 0 for a
// single-topic model's), and a vocabulary of D words when present.
func (m *Model) Validate() error {
	if m.K < 1 || m.D < 1 {
		return fmt.Errorf("k=%d and d=%d must be positive", m.K, m.D)
	}
	if len(m.Topics) != m.K || len(m.Alpha) != m.K {
		return fmt.Errorf("k=%d but %d topics and %d alphas", m.K, len(m.Topics), len(m.Alpha))
	}
	for i, a := range m.Alpha {
		// Dirichlet parameters are positive; a single-topic model's weights
		// are at least 0.
		if math.IsNaN(a) || math.IsInf(a, 0) || a < 0 || a == 0 && m.Model != "topic" {
			return fmt.Errorf("alpha of topic %d is %g: want a finite number > 0", i, a)
		}
	}
	for i, row := range m.Topics {
		if len(row) != m.D {
			return fmt.Errorf("topic %d has %d entries, d=%d", i, len(row), m.D)
		}
		s := 0.0
		for _, x := range row {
			if x < 0 || math.IsNaN(x) {
				return fmt.Errorf("topic %d has an entry %g outside [0,1]", i, x)
			}
			s += x
		}
		if math.Abs(s-1) > 1e-6 {
			return fmt.Errorf("topic %d sums to %g, not 1", i, s)
		}
	}
	if m.Vocab != nil && len(m.Vocab) != m.D {
		return fmt.Errorf("vocabulary has %d words, d=%d", len(m.Vocab), m.D)
	}
	return nil
}

// Write validates m and stores it as JSON at path through a temporary file, so
// an interrupted write never leaves a file that looks complete. The bytes are
// those of json.Marshal(m) plus a newline, but the topics are encoded one row
// at a time, so writing a large model (d=100,000, k=100: 10⁷ probabilities,
// about 200 MB of text) does not hold the whole text in memory.
func (m *Model) Write(path string) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("%s: refusing to write an invalid model: %w", path, err)
	}
	head := *m
	head.Topics = nil
	return stream.WriteJSONRows(path, &head, "topics", m.Topics)
}

// Read loads and validates a model (or truth) file.
func Read(path string) (*Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Parse reads and validates a model from the bytes of a model file. The
// fit's plan record (FitRecord.Plan) is kept as the bytes it was written as
// (a *json.RawMessage), so that a model read and written again has the
// same bytes.
func Parse(b []byte) (*Model, error) {
	plan := &json.RawMessage{}
	m := Model{Fit: &FitRecord{Plan: plan}}
	if err := json.Unmarshal(b, &m); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("not a model file: offset %d: %w", se.Offset, err)
		}
		return nil, fmt.Errorf("not a model file: %w", err)
	}
	if m.Fit != nil && m.Fit.Plan == any(plan) && len(*plan) == 0 {
		m.Fit.Plan = nil
		if reflect.ValueOf(*m.Fit).IsZero() {
			m.Fit = nil // the file has no fit record
		}
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// FitStats and EMStats are FitRecord and EMRecord under the names the LDA
// fit's EM passes use.
type (
	FitStats = FitRecord
	EMStats  = EMRecord
)
