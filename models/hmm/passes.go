package hmm

import (
	"encoding/json"
	"fmt"

	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/models/multiview"
	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/blas/blas64"
)

// The statistics of a fit are the two passes of the three-view method
// (multiview.TriplePlan) over the triples of consecutive steps: pass 1
// takes no basis, pass 2 the merged pass 1. The passes read the rows in
// order (a sequence continues across batches); a shard owns the sequences
// that begin in it (shard.Part.Groups), and the sums of a batch's triples
// are handed on at the first sequence that begins in the batch, so that
// shards cut at batch boundaries, moved to that sequence, merge exactly.

// params are the settings of a fit its statistics depend on.
type params struct {
	Windows bool `json:"windows,omitempty"`
}

// Plan is the passes of a fit with Config (see Planner); Path names the
// input in errors.
type Plan struct {
	Config Config
	Path   string
}

// ConfigFromStats returns cfg with the settings the statistics' header h
// fixes (K, Windows).
func ConfigFromStats(cfg Config, h statsfile.Header) (Config, error) {
	var p params
	if err := h.DecodeParams(&p, "hmm"); err != nil {
		return cfg, fmt.Errorf("hmm: %w", err)
	}
	cfg.K, cfg.Windows = h.K, p.Windows
	return cfg, nil
}

// triplePlan returns the passes over rows of d columns.
func (p *Plan) triplePlan(d int) (*multiview.TriplePlan, error) {
	cfg := p.Config
	if cfg.K < 1 {
		return nil, fmt.Errorf("hmm: k=%d, need at least one state", cfg.K)
	}
	pj, _ := json.Marshal(params{Windows: cfg.Windows})
	path := p.Path
	return &multiview.TriplePlan{
		Header:  statsfile.Header{Model: "hmm", D: d, K: cfg.K, Params: pj},
		Dims:    [3]int{d, d, d},
		Ordered: true,
		// Real sequences may support fewer states than asked (k above d,
		// states of equal means): pass 2 and the fit take as many as the
		// carried pass-1 totals support, with a warning (FitStats).
		Fewer: true,
		Unit:  "state",
		Triples: func() func(*stream.Dense, func(x1, x2, x3 blas64.General), *float64, func() error) error {
			r := newSeqReader(path, d, cfg.Windows)
			return r.batch
		},
	}, nil
}

// Planner returns the passes of the fit as an implicit.Planner.
func (p *Plan) Planner() multiview.Triples {
	return multiview.TriplesOf(p.Config, ConfigFromStats, func(c Config, d int) (*multiview.TriplePlan, error) {
		return (&Plan{Config: c, Path: p.Path}).triplePlan(d)
	})
}

// seqReader reads the rows of a pass in order and makes the triples
// (x₁, x₂, x₃): the first three steps of each sequence, or every window of
// three with windows. A batch's triples are handed on with the batch
// (several blocks of blockTriples for a large one).
type seqReader struct {
	path    string
	d       int
	windows bool
	bufs    [3][]float64
	nb      int
	prev    [2][]float64
	started bool
	cur     int64
	pos     int   // steps seen in the current sequence
	first   int64 // row where it started
}

func newSeqReader(path string, d int, windows bool) *seqReader {
	r := &seqReader{path: path, d: d, windows: windows, prev: [2][]float64{make([]float64, d), make([]float64, d)}}
	for t := range r.bufs {
		r.bufs[t] = make([]float64, blockTriples*d)
	}
	return r
}

func (r *seqReader) flush(fn func(x1, x2, x3 blas64.General)) {
	if r.nb == 0 {
		return
	}
	var xs [3]blas64.General
	for t := range xs {
		xs[t] = blas64.General{Rows: r.nb, Cols: r.d, Stride: r.d, Data: r.bufs[t][:r.nb*r.d]}
	}
	r.nb = 0
	fn(xs[0], xs[1], xs[2])
}

func (r *seqReader) endSeq() error {
	if r.started && r.pos < 3 {
		return stream.Errorf(r.path, 0, r.first, "", ErrShort, "sequence %d has %d rows", r.cur, r.pos)
	}
	return nil
}

// batch adds the triples of b (nil: the end of the pass) through fn, and
// the sequences b begins to *groups; at the first sequence b begins, it
// flushes the triples before and commits them.
func (r *seqReader) batch(b *stream.Dense, fn func(x1, x2, x3 blas64.General), groups *float64, commit func() error) error {
	if b == nil {
		return r.endSeq()
	}
	d := r.d
	if err := models.CheckRows(r.path, b, d); err != nil {
		return err
	}
	if b.Rows > 0 && len(b.Group) != b.Rows {
		return stream.Errorf(r.path, 0, b.Start, "", stream.ErrSchema, "no sequence id column: the HMM needs one id per row")
	}
	cut := false // the triples before the first sequence b begins are committed
	for i := range b.Rows {
		id := b.Group[i]
		if r.started && id < r.cur {
			return stream.Errorf(r.path, 0, b.Start+int64(i), "", stream.ErrOrder, "sequence id %d follows sequence id %d: the rows of a sequence must be contiguous and in time order, with ids increasing (sort the rows by sequence id, then time)", id, r.cur)
		}
		if !r.started || id != r.cur {
			if err := r.endSeq(); err != nil {
				return err
			}
			if !cut {
				cut = true
				r.flush(fn)
				if err := commit(); err != nil {
					return err
				}
			}
			*groups++
			r.started = true
			r.cur, r.pos, r.first = id, 0, b.Start+int64(i)
		}
		x := b.Row(i)
		if r.pos >= 2 && (r.windows || r.pos == 2) {
			copy(r.bufs[0][r.nb*d:], r.prev[0])
			copy(r.bufs[1][r.nb*d:], r.prev[1])
			copy(r.bufs[2][r.nb*d:], x)
			r.nb++
			if r.nb == blockTriples {
				r.flush(fn)
			}
		}
		if r.pos < 2 || r.windows {
			r.prev[0], r.prev[1] = r.prev[1], r.prev[0]
			copy(r.prev[1], x)
		}
		r.pos++
	}
	r.flush(fn)
	return nil
}
