package beamfit

import (
	"cmp"
	"context"
	"os"
	"slices"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models/lda"
)

// Output says what the last step of the pipeline writes, each file
// atomically (a temporary name renamed at the end), on the worker that runs
// it: a path every worker can write to, or an object on gs:// or s3://
// (written locally, then uploaded whole: withOutputs).
type Output struct {
	// Model is the model file (JSON) fitted from the merged phase-2
	// statistics; "" writes none (statistics only).
	Model string `json:"model"`
	// Stats is the file of the merged statistics of the last phase the
	// pipeline runs (phase 2 when it fits); "" writes none.
	Stats string `json:"stats"`
	// HeldOut, for a sweep over k (Settings.Ks), is the file of held-out
	// documents every k is scored on, and Scores the file the scores and
	// the recommended k are written to (report.SweepFile, as `streamfit
	// fit --k LIST --json` prints it); both "" for no scores. A sweep
	// writes the model of each k to lda.SweepOut(Model, k).
	HeldOut string `json:"heldout,omitempty"`
	Scores  string `json:"scores,omitempty"`
	// NoTiming leaves the fit's wall time out of the model file, so the
	// same input and settings give the same bytes.
	NoTiming bool `json:"no_timing"`
	// Fit holds the settings of the final fit (solver, restarts...).
	Fit Settings `json:"fit"`
}

// write fits the model from the merged statistics st (when o.Model is set)
// and writes the outputs; when the model cannot be written, the statistics
// file written before it is removed, so a failed pipeline leaves neither.
func (o Output) write(ctx context.Context, st *implicit.TopicStats) error {
	st.Header.Inputs = coalesce(st.Header.Inputs)
	return o.outputs(func() error { return implicit.WriteTopicStats(ctx, o.Stats, st) }, func() error {
		// As `streamfit fit --from-stats`: the exact totals' low words
		// serve merges only.
		st.Exact = nil
		m, err := lda.FitStats(ctx, st, o.Fit.config())
		if err != nil {
			return err
		}
		if o.NoTiming {
			m.Fit.Seconds = 0
		}
		return m.Write(o.Model)
	})
}

// outputs writes the statistics file by stats (when o.Stats is set), then
// the model by fit (when o.Model is set); when the model cannot be written,
// the statistics file written before it is removed, so a failed pipeline
// leaves neither.
func (o Output) outputs(stats, fit func() error) error {
	if o.Stats != "" {
		if err := stats(); err != nil {
			return err
		}
	}
	if o.Model == "" {
		return nil
	}
	err := fit()
	if err != nil && o.Stats != "" {
		os.Remove(o.Stats)
	}
	return err
}

// coalesce joins the inputs that are consecutive ranges of documents of
// one file (the row groups of a file, each a work unit) into one range, so
// merged statistics list each file once, as `streamfit stats` over whole
// files does. Overlaps are still found against the joined ranges
// (statsfile.Header.Covers).
func coalesce(in []statsfile.Input) []statsfile.Input {
	in = slices.Clone(in)
	slices.SortStableFunc(in, func(a, b statsfile.Input) int {
		return cmp.Or(cmp.Compare(a.Fingerprint, b.Fingerprint), cmp.Compare(start(a), start(b)))
	})
	var out []statsfile.Input
	for _, x := range in {
		if n := len(out); n > 0 {
			last := &out[n-1]
			if last.Fingerprint == x.Fingerprint && last.Path == x.Path && last.Docs != nil && x.Docs != nil && last.Docs[1] == x.Docs[0] {
				last.Docs = &[2]int64{last.Docs[0], x.Docs[1]}
				continue
			}
		}
		out = append(out, x)
	}
	return out
}

// start is the first document of the input.
func start(a statsfile.Input) int64 {
	if a.Docs == nil {
		return 0
	}
	return a.Docs[0]
}
