package beamfit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
)

// encode writes statistics in the statistics file format (the bytes that
// travel between the stages of the pipeline); nil statistics are no bytes.
func encode[S any, P interface {
	*S
	Encode(context.Context, io.Writer) error
}](ctx context.Context, st P) ([]byte, error) {
	if st == nil {
		return nil, nil
	}
	var b bytes.Buffer
	if err := st.Encode(ctx, &b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// decode parses statistics encoded by encode; no bytes are nil statistics.
func decode(b []byte) (*implicit.TopicStats, error) {
	if len(b) == 0 {
		return nil, nil
	}
	return implicit.DecodeTopicStats(b)
}

// basisCache keeps the statistics decoded from the last side input, which
// is the same for every element of a stage.
type basisCache struct {
	raw []byte
	st  statsAcc
}

// get returns the statistics encoded in b.
func (c *basisCache) get(b []byte) (statsAcc, error) {
	if !c.st.empty() && bytes.Equal(c.raw, b) {
		return c.st, nil
	}
	st, err := decodeAcc(b)
	if err != nil {
		return st, fmt.Errorf("basis: %w", err)
	}
	c.raw, c.st = b, st
	return st, nil
}

// Pass names of the statistics a work unit computes.
const (
	passPhase1 = "1"
	passPower  = "power"
	passPhase2 = "2"
)

// unitStats computes the statistics of pass over the documents of u, read
// with o: phase 1 (basis unused), a power pass with the Q of the power
// statistics basis, or phase 2 with the W of the phase-2 statistics basis
// (the templates of basisFn). They record u as their input.
func unitStats(ctx context.Context, u Unit, o stream.Options, pass string, basis *implicit.TopicStats, cfg lda.Config) (*implicit.TopicStats, error) {
	src, err := u.open(o)
	if err != nil {
		return nil, err
	}
	defer stream.Close(src)
	var st *implicit.TopicStats
	switch pass {
	case passPhase1:
		st, err = lda.Phase1Stats(ctx, src, cfg)
	case passPower:
		st, err = lda.PowerStatsLike(ctx, src, basis, cfg)
	case passPhase2:
		st, err = lda.Phase2Stats(ctx, src, basis, cfg)
	default:
		err = fmt.Errorf("unknown pass %q", pass)
	}
	if err != nil {
		return nil, fmt.Errorf("%v: %w", u, err)
	}
	st.Header.Inputs = []statsfile.Input{u.Input}
	return st, nil
}

// noDocs is a source of no documents over the vocabulary of statistics:
// a pass over it computes the projection of the next pass from the merged
// statistics once (and stores it in statistics of no documents), which
// every work unit then reuses instead of computing it again.
type noDocs struct{ info stream.Info }

func noDocsOf(st *implicit.TopicStats) noDocs {
	return noDocs{stream.Info{Format: "none", Terms: st.Header.D, Vocab: st.Vocab}}
}

func (n noDocs) Info() stream.Info { return n.info }

func (noDocs) Docs(context.Context) iter.Seq2[*stream.Docs, error] {
	return func(func(*stream.Docs, error) bool) {}
}

// powerTemplate returns the template of the power pass after the merged
// statistics basis (phase 1, or the power pass before): statistics of no
// documents that hold the pass's Q, or nil when the pass is not taken (the
// default fit's sketch decays past k, or the whitening is exact).
func powerTemplate(ctx context.Context, basis *implicit.TopicStats, cfg lda.Config) (*implicit.TopicStats, error) {
	if basis.Header.Exact {
		return nil, nil
	}
	if cfg.PowerIters == 0 {
		_, power, err := lda.PowerAdvice(ctx, basis, cfg)
		if err != nil || !power {
			return nil, err
		}
	}
	return lda.PowerStats(ctx, noDocsOf(basis), basis, cfg)
}

// phase2Template returns the template of phase 2 after the merged phase-1
// or power statistics basis: statistics of no documents that hold the
// whitening W (computed from basis as `streamfit stats --phase 2` does).
func phase2Template(ctx context.Context, basis *implicit.TopicStats, cfg lda.Config) (*implicit.TopicStats, error) {
	return lda.Phase2Stats(ctx, noDocsOf(basis), basis, cfg)
}
