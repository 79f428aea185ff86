package beamfit

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"

	"github.com/streamfit/streamfit/models"
	_ "github.com/streamfit/streamfit/models/all" // every model, by name
	"github.com/streamfit/streamfit/models/lda"
)

// Settings are the settings of the fit the pipeline runs, as the flags of
// `streamfit stats` and `streamfit fit` give them (Bind). They travel to
// the workers as JSON, with the DoFns.
type Settings struct {
	// Model names the model of the fit (models.Lookup); "" is LDA, or the
	// single-topic model with Single. A model of dense sample rows has its
	// own settings in Dense.
	Model string `json:"model"`
	K     int    `json:"k"`
	// Ks are the k of a sweep over k (lda and topic: lda.FitKStats), in
	// ascending order, K the largest; nil for one k.
	Ks     []int   `json:"ks,omitempty"`
	Alpha0 float64 `json:"alpha0"`
	Single bool    `json:"single"`
	Seed   uint64  `json:"seed"`
	// Dense holds the settings of a model of dense rows beyond these: the
	// JSON of its kind's models.DenseSettings, as its flags set them
	// (Bind); none for the topic models.
	Dense []byte `json:"dense,omitempty"`
	// Oversample, PowerIters and ExactDim tune the topic models'
	// whitening (those of lda.Config).
	Oversample int `json:"oversample"`
	PowerIters int `json:"power_iters"`
	ExactDim   int `json:"exact_dim"`
	// Workers is the number of goroutines each work unit's pass (and the
	// final solve) uses on its worker (0: one per CPU).
	Workers int `json:"workers"`
	// Solver, Restarts and Iters set the final fit's tensor decomposition,
	// and Refine the topic models' CP-ALS sweeps after it (lda.Config).
	Solver   string `json:"solver"`
	Refine   int    `json:"refine"`
	Restarts int    `json:"restarts"`
	Iters    int    `json:"iters"`
	// EMPasses caps the EM passes that refine the spectral fit of a topic
	// model (0: none, the pure spectral fit); EMTol and EMAlpha are
	// streamfit fit's --em-tol and --em-alpha (lda.EM). A dense model's
	// likelihood passes are settings of its own, in Dense.
	EMPasses int     `json:"em_passes"`
	EMTol    float64 `json:"em_tol"`
	EMAlpha  bool    `json:"em_alpha"`
}

// denseErr reports why Dense holds no settings of the model Model names.
func (s Settings) denseErr() error {
	_, err := s.denseSettings()
	return err
}

// denseSettings decodes Dense: the settings of the model Model names.
func (s Settings) denseSettings() (models.DenseSettings, error) {
	k, err := models.Lookup(s.Model)
	if err != nil {
		return nil, err
	}
	ds, ok := k.Settings(models.FitFlags).(models.DenseSettings)
	if !ok {
		return nil, fmt.Errorf("%s: not a model of dense rows", s.Model)
	}
	if err := json.Unmarshal(s.Dense, ds); err != nil {
		return nil, fmt.Errorf("%s settings: %w", s.Model, err)
	}
	return ds, nil
}

// Bind registers on fs the flags of a fit of the model called name: those
// every fit reads (--k, --seed, --workers, the solver's), and the model's
// own — a dense model's settings (models.DenseSettings), or the topic
// models' whitening and EM passes. It returns the settings they set and
// the check that completes them once fs is parsed.
func Bind(fs *flag.FlagSet, name string) (*Settings, func() error, error) {
	k, err := models.Lookup(name)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	s := &Settings{K: 10}
	ks := k.Settings(models.FitFlags)
	usage := "number of components or states (default 10)"
	if _, ok := ks.(*lda.Settings); ok {
		usage = "number of topics (default 10), or the k of a sweep: a list, 10,20,50, or a range, 10:100:10, each k fitted from the statistics of the sweep and EM passes whose reads serve every k (a model file per k, --out 'model-k{k}.json')"
	}
	fs.Var(kValue{s}, "k", usage)
	fs.Uint64Var(&s.Seed, "seed", 1, "random seed (the sketch Ω and the solver's restarts)")
	fs.IntVar(&s.Workers, "workers", 0, "goroutines per work unit on a worker: decoding, accumulation and the final solve (default: one per CPU)")
	fs.StringVar(&s.Solver, "solver", "", "tensor decomposition of the final fit (default: the model's)")
	fs.IntVar(&s.Restarts, "restarts", 0, "solver restarts per component (0: solver default)")
	fs.IntVar(&s.Iters, "iters", 0, "solver iterations per phase (0: solver default)")
	if ds, ok := ks.(models.DenseSettings); ok {
		s.Model = k.Name()
		ds.Flags(fs)
		return s, func() error {
			if s.sweep() {
				return fmt.Errorf("%w: --k %s: a list of k is for the topic models (lda, topic)", ErrUsage, kValue{s})
			}
			// The pipeline reads the rows, so the likelihood passes of
			// the model's fit (models.Refinement) follow its moments.
			if err := ds.Check(models.Check{Given: models.Given(fs)}); err != nil {
				return fmt.Errorf("%w: %w", ErrUsage, err)
			}
			var err error
			s.Dense, err = json.Marshal(ds)
			return err
		}, nil
	}
	ts, ok := ks.(*lda.Settings)
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s: the pipeline fits topic models and models of dense rows", ErrUsage, name)
	}
	s.Single = ts.Config.Single
	s.bindTopic(fs)
	return s, s.checkTopic, nil
}

// bindTopic registers the flags of the topic models' fit.
func (s *Settings) bindTopic(fs *flag.FlagSet) {
	if !s.Single {
		fs.Float64Var(&s.Alpha0, "alpha0", 1, "Dirichlet concentration α₀ (> 0)")
	}
	fs.IntVar(&s.Oversample, "oversample", 0, "extra sketch columns beyond k (0: the default, 10)")
	fs.IntVar(&s.PowerIters, "power-iters", 0, "power passes of the randomized whitening: 0 as the default fit (one when the first sketch does not decay), -1 none, N exactly N")
	fs.IntVar(&s.ExactDim, "exact-dim", 0, "whiten exactly (dense d×d) up to this vocabulary size, above it through a randomized sketch (0: default, -1: never)")
	fs.IntVar(&s.Refine, "als-sweeps", 0, "CP-ALS sweeps on the tensor after the solver (fit --als-sweeps)")
	fs.IntVar(&s.EMPasses, "em-passes", lda.DefaultEMPasses, "cap on the EM passes that refine the spectral fit by likelihood, as streamfit fit's (0: the pure spectral fit)")
	fs.Float64Var(&s.EMTol, "em-tol", lda.DefaultEMTol, "stop the EM passes when the training bound improved by less than this (> 0), relatively, in a pass")
	fs.BoolVar(&s.EMAlpha, "em-alpha", true, "lda: re-estimate α in every EM pass; false keeps the spectral α̂")
}

// checkTopic refuses topic settings out of range.
func (s *Settings) checkTopic() error {
	switch {
	case !s.Single && (!(s.Alpha0 > 0) || math.IsInf(s.Alpha0, 1)):
		return fmt.Errorf("%w: --alpha0=%g: the Dirichlet concentration must be a finite number > 0", ErrUsage, s.Alpha0)
	case s.EMPasses < 0 || !(s.EMTol > 0) || math.IsInf(s.EMTol, 1):
		return fmt.Errorf("%w: --em-passes=%d, --em-tol=%g: want a pass cap ≥ 0 and a finite tolerance > 0", ErrUsage, s.EMPasses, s.EMTol)
	}
	return nil
}

// refinement is the likelihood refinement that follows the moment fit of
// a dense model (models.RefinementOf), nil when none does.
func (s Settings) refinement() (models.Refinement, error) {
	ds, err := s.denseSettings()
	if err != nil {
		return nil, err
	}
	return models.RefinementOf(ds, s.common()), nil
}

// emCap is the number of EM stages the pipeline holds: the cap on the
// passes of a topic model's EM or of a dense model's refinement.
func (s Settings) emCap() int {
	if !s.dense() {
		return s.EMPasses
	}
	if r, err := s.refinement(); err == nil && r != nil {
		return r.Cap()
	}
	return 0
}

// dense reports whether the fit is of a model of dense rows, whose passes
// are those of its shard workflow: pass 1, then each pass against the
// merged pass before, until the statistics hold all the fit needs.
func (s Settings) dense() bool { return s.Model != "" }

// common are the settings every model's fit reads.
func (s Settings) common() models.Common {
	return models.Common{K: s.K, Seed: s.Seed, Solver: s.Solver, Restarts: s.Restarts, Iters: s.Iters, Workers: s.Workers}
}

// config is the lda.Config of the settings. Third is streamfit fit's
// default (--plan auto), which the model records: the statistics hold the
// explicit tensor that plan chooses. A sweep's is lda.SweepConfig's: the
// Config of the statistics of every k of Ks (checked by Options.check).
func (s Settings) config() lda.Config {
	if s.sweep() {
		c := s
		c.Ks = nil
		cfg, _ := lda.SweepConfig(c.config(), s.Ks)
		return cfg
	}
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
