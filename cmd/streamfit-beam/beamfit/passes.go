package beamfit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
)

// Settings are the settings of the fit the pipeline runs (LDA, the
// single-topic model, or a GMM), as the flags of `streamfit stats` and
// `streamfit fit` give them. They travel to the workers as JSON, with the
// DoFns.
type Settings struct {
	// Model is a dense model of the dense sample rows of the inputs (one
	// of DenseModels: "gmm", "ica", ...), "" for LDA (or the single-topic
	// model: Single).
	Model  string  `json:"model"`
	K      int     `json:"k"`
	Alpha0 float64 `json:"alpha0"`
	Single bool    `json:"single"`
	Seed   uint64  `json:"seed"`
	// Differing and Sigma2 are those of gmm.Config (Sigma2 also of
	// markov.Config, with R, the snapshot rate).
	Differing bool    `json:"differing"`
	Sigma2    float64 `json:"sigma2"`
	R         float64 `json:"r"`
	// Views, RandomViews and Rotate are those of multiview.Config;
	// Windows and Discrete of hmm.Config.
	Views       [][]int `json:"views"`
	RandomViews bool    `json:"random_views"`
	Rotate      bool    `json:"rotate"`
	Windows     bool    `json:"windows"`
	Discrete    bool    `json:"discrete"`
	Oversample  int     `json:"oversample"`
	PowerIters  int     `json:"power_iters"`
	ExactDim    int     `json:"exact_dim"`
	// Workers is the number of goroutines each work unit's pass (and the
	// final solve) uses on its worker (0: one per CPU).
	Workers int `json:"workers"`
	// Solver, Refine, Restarts and Iters are those of lda.Config, for the
	// final fit.
	Solver   string `json:"solver"`
	Refine   int    `json:"refine"`
	Restarts int    `json:"restarts"`
	Iters    int    `json:"iters"`
	// EMPasses caps the EM passes that refine the spectral fit (0: none,
	// the pure spectral fit); EMTol and EMAlpha are streamfit fit's
	// --em-tol and --em-alpha (lda.EM).
	EMPasses int     `json:"em_passes"`
	EMTol    float64 `json:"em_tol"`
	EMAlpha  bool    `json:"em_alpha"`
}

// config is the lda.Config of the settings. Third is streamfit fit's
// default (--plan auto), which the model records: the statistics hold the
// explicit tensor that plan chooses.
func (s Settings) config() lda.Config {
	return lda.Config{K: s.K, Alpha0: s.Alpha0, Single: s.Single, Seed: s.Seed, Workers: s.Workers,
		Oversample: s.Oversample, PowerIters: s.PowerIters, ExactDim: s.ExactDim, Third: lda.Auto,
		Solver: s.Solver, Refine: s.Refine, Restarts: s.Restarts, Iters: s.Iters,
		EM: lda.EM{Passes: s.EMPasses, Tol: s.EMTol, FitAlpha: s.EMAlpha}}
}

// powerStages is the number of power passes the pipeline has room for:
// PowerIters when positive, none when negative, and one for the default,
// which the data decide (lda.PowerAdvice) when the pipeline runs.
func (s Settings) powerStages() int {
	switch {
	case s.PowerIters > 0:
		return s.PowerIters
	case s.PowerIters < 0:
		return 0
	}
	return 1
}

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
func decode(b []byte) (*implicit.Stats, error) {
	if len(b) == 0 {
		return nil, nil
	}
	return implicit.DecodeStats(b)
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
func unitStats(ctx context.Context, u Unit, o stream.Options, pass string, basis *implicit.Stats, cfg lda.Config) (*implicit.Stats, error) {
	src, err := u.open(o)
	if err != nil {
		return nil, err
	}
	defer stream.Close(src)
	var st *implicit.Stats
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
	st.Header.Inputs = []implicit.Input{u.Input}
	return st, nil
}

// noDocs is a source of no documents over the vocabulary of statistics:
// a pass over it computes the projection of the next pass from the merged
// statistics once (and stores it in statistics of no documents), which
// every work unit then reuses instead of computing it again.
type noDocs struct{ info stream.Info }

func noDocsOf(st *implicit.Stats) noDocs {
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
func powerTemplate(ctx context.Context, basis *implicit.Stats, cfg lda.Config) (*implicit.Stats, error) {
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
func phase2Template(ctx context.Context, basis *implicit.Stats, cfg lda.Config) (*implicit.Stats, error) {
	return lda.Phase2Stats(ctx, noDocsOf(basis), basis, cfg)
}
