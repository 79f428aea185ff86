package models

import "fmt"

// Summary implements Fitted.
func (m *Model) Summary() string {
	if m.Fit == nil {
		return fmt.Sprintf("%d topics over %d words", m.K, m.D)
	}
	s := fmt.Sprintf("%d topics over %d words from %d documents (%d skipped), %d passes", m.K, m.D, m.Fit.Docs, m.Fit.Skipped, m.Fit.Passes)
	if em := m.Fit.EM; em != nil {
		s += fmt.Sprintf(" (%d of them EM, training bound %.5f per token)", em.Passes, em.Bounds[len(em.Bounds)-1])
	}
	if c := m.Fit.CubeSample; c != nil {
		res := "unknown"
		if r := m.Fit.Solver.Residual; r != nil {
			res = fmt.Sprintf("%.3g", *r)
		}
		if c.Redone {
			s += fmt.Sprintf("; the third moment's cubes from every document (a %.1f%% sample's error, %.3g, was over a quarter of the residual, %s)", 100*c.Rate, c.StdErr, res)
		} else {
			s += fmt.Sprintf("; the third moment's cubes from a %.1f%% sample of the documents (error %.3g against the model's residual %s)", 100*c.Rate, c.StdErr, res)
		}
	}
	return s
}

// Warnings implements Fitted.
func (m *Model) Warnings() []string {
	if m.Fit == nil {
		return nil
	}
	return m.Fit.Warnings
}

// ClearTiming implements Fitted.
func (m *Model) ClearTiming() {
	if m.Fit != nil {
		m.Fit.Seconds = 0
	}
}

// Eval implements Evaluator (Evaluate).
func (m *Model) Eval(truth Fitted) (any, error) { return EvalAs(m, truth, Evaluate) }

// Text is the evaluation as eval prints it, one figure a line.
func (e *Evaluation) Text() string {
	return fmt.Sprintf("topics:    %d fitted, %d true\nmean ℓ1:   %.4f\nmax ℓ1:    %.4f\nfound:     %d/%d (ℓ1 < %.1f)\nα error:   %.4f (relative)\n",
		e.K, e.TruthK, e.MeanL1, e.MaxL1, e.Found, e.TruthK, FoundL1, e.AlphaRelErr)
}
