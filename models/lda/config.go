package lda

import (
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/sketch"
)

// Config controls a fit. Zero values select the defaults noted on each field,
// except Alpha0, which LDA needs to be told.
type Config struct {
	// K is the number of topics (required, 1 ≤ K < vocabulary size).
	K int
	// Alpha0 is LDA's Dirichlet concentration α₀ = Σαᵢ, which the method
	// needs to know: it must be given, finite and positive (1 is a common
	// choice); zero is an error rather than a silent default. Ignored when
	// Single.
	Alpha0 float64
	// Single fits the exchangeable single-topic model instead of LDA.
	Single bool
	// Seed drives the random sketch and the solver's restarts. The same
	// source and Seed give the same model, whatever Workers.
	Seed uint64
	// Workers is the number of goroutines consuming each pass (default
	// GOMAXPROCS). It does not change the result: batches are reduced
	// concurrently but summed in order.
	Workers int
	// Oversample is the number of sketch columns beyond K (default
	// sketch.DefaultOversample, 10; negative means none). With PowerIters
	// 0, Fit sketches again with more columns when the range of the first
	// sketch holds fewer than K positive directions of M̂2 (see Fit).
	Oversample int
	// PowerIters adds that many power passes to the randomized whitening,
	// each one more pass over the data. The default (0) is two passes in
	// all, plus one power pass when the first sketch shows no decay past
	// the k-th direction (σ_last/σ_k > 0.95, as at vocabulary 100,000 and
	// k=100), where two passes would span some topics poorly. A negative
	// value means exactly two passes, never the automatic one.
	PowerIters int
	// ExactDim uses the exact dense whitening when the vocabulary has at
	// most this many words; 0 means DefaultExactDim and a negative value
	// never.
	ExactDim int
	// Third is how the second pass holds the whitened third moment (docs/MATH.md
	// §3.3–3.5): Explicit (the packed k×k×k tensor; the default), Sketch (a
	// tensor sketch of SketchLen×SketchCount buckets: one pass, memory set by
	// the sketch, accuracy limited by it) or Rows (every document's whitened
	// row compressed on disk under RowDir: memory O(d·k), and every
	// contraction of the solver one pass over the rows). Auto lets PlanSource
	// choose from k, the vocabulary, the number of documents and Memory.
	Third Third
	// SketchLen and SketchCount size the tensor sketch of Third == Sketch
	// (0: DefaultSketch).
	SketchLen, SketchCount int
	// RowDir is the directory under which Third == Rows keeps its temporary
	// files ("" means os.TempDir()); they are removed when the fit ends.
	RowDir string
	// Memory is the budget in bytes the automatic plan must fit (0:
	// DefaultMemory, half the physical memory).
	Memory int64
	// Implicit decomposes the implicit operator θ ↦ T(I,θ,θ) over the
	// whitened document rows kept in memory (docs/MATH.md §3.3) instead of the packed
	// k×k×k tensor. Memory then grows with the number of documents (n·k
	// floats); it exists to cross-check the other representations on small
	// data (Third == Rows keeps the rows on disk instead).
	Implicit bool
	// Solver names the decomposition (solver.Names; default: see solverFor —
	// orthogonal joint diagonalisation for a pure spectral fit of the
	// explicit tensor, the simultaneous power method otherwise). "rtpm" is
	// the usual alternative. Refine adds that many CP-ALS sweeps.
	Solver string
	Refine int
	// Restarts and Iters are passed to the robust tensor power method (random
	// starts per topic and iterations per phase; 0 means the solver's
	// default, except that RTPM gets at most rtpmStarts starts per topic).
	Restarts, Iters int
	// Progress, when set, is called after every batch and at the end of every
	// pass, one call at a time.
	Progress func(Progress)
	// OnPlan, when set, is called with the plan (PlanSource) before the
	// first pass, and again with a revised plan (Plan.Revised) after the
	// whitening when the fit took the automatic power pass.
	OnPlan func(*Plan)
	// Checkpoint, when its Dir is set, saves the passes' statistics there
	// and resumes from them after an interruption (checkpoint.go).
	Checkpoint Checkpoint
	// EM refines the spectral fit by variational EM passes over the source
	// (em.go; the zero value: none).
	EM EM
	// CubeSample bounds the work of the explicit third moment on a large
	// corpus: its cubes y⊗y⊗y (the pass's O(K³/6) work per document) are
	// summed over a seeded sample of the documents of about this many
	// tokens (implicit.TripleAcc.Cubes), each weighted by the inverse of
	// the sample's share, while every other sum of the pass runs over all
	// of them. 0 chooses (cubeSample): a sample of the EM sample's default
	// size where the corpus has at least four times its tokens and the
	// whitening found the second moment departing from the model, every
	// document elsewhere; −1: every document. The sample's noise adds to
	// the spectral fit's error, which matters on data drawn from LDA,
	// where nothing else limits it, and is lost in the model's misfit on
	// real text: the fit records both (models.CubeSample) and warns when
	// the noise is not well below the misfit.
	CubeSample int64

	// float64Sums forms the batch partial sums in float64 instead of float32
	// (tests compare the two; the implicit operator always uses float64, as
	// it is the exact cross-check of the packed tensor).
	float64Sums bool
	// peek overrides peekNegative's answer in tests (peekAuto: measure).
	peek peekMode
	// autoCubeTokens overrides the automatic cube sample's size in tests
	// (0: the EM sample's default).
	autoCubeTokens int64
	// pairSums makes the third-moment pass sum Ê2·W even where the power
	// pass measured it (basis.e2w), in tests.
	pairSums bool
	// noFuse runs the power pass and the third-moment pass apart where
	// they would be one pass (fused.go), in tests.
	noFuse bool
	// ownCubeCopy makes the fused pass keep its own copy of the cube
	// sample where the EM passes keep the same documents, in tests.
	ownCubeCopy bool
}

// cubeSample is the sample of the documents whose cubes the explicit
// third-moment pass sums, for a corpus of tokens tokens, d words and k
// topics, whose second moment has negative directions among its largest
// (the whitening's count). Every document for the implicit operator (the
// exact cross-check), with CubeSample −1, for a corpus of at most the
// sample's tokens, and, when CubeSample is 0, unless the corpus has at
// least autoCubeShare times the tokens of the EM sample's default size
// and negative directions: LDA's second moment has none, so on data
// drawn from it they are only noise well below the k-th eigenvalue
// (none are counted), while on real text they rival it, a misfit no
// number of documents removes and that a sample's noise is small
// against (the fit measures both, models.CubeSample).
func (cfg Config) cubeSample(tokens int64, d, k, negative int) implicit.DocSample {
	n := cfg.CubeSample
	if n == 0 {
		n = cfg.autoCubeTokens
		if n == 0 {
			n = EM{}.sampleTokens(d, k)
		}
		if negative == 0 || tokens < autoCubeShare*n {
			return implicit.DocSample{}
		}
	}
	if n < 0 || tokens <= n || cfg.Implicit {
		return implicit.DocSample{}
	}
	return implicit.DocSample{Rate: float64(n) / float64(tokens), Seed: cfg.Seed}
}

// autoCubeShare is how many times the sample's tokens a corpus must hold
// for CubeSample 0 to sample the cubes: the sample then saves at least
// three quarters of their work.
const autoCubeShare = 4

// cubeWarnShare: a cube sample whose error exceeds this share of the
// solver's relative residual gets a warning (errors add in quadrature: a
// quarter moves the total by 3%).
const cubeWarnShare = 0.25

// noisyCubes reports whether the cube sample c's error exceeds
// cubeWarnShare of the solver's relative residual (nil: unknown, and
// then false).
func noisyCubes(c *models.CubeSample, residual *float64) bool {
	return c != nil && residual != nil && c.StdErr > cubeWarnShare**residual
}

// cubeSampleWarning is the warning of a cube sample whose error is not
// well below the model's misfit to the moment (residual, nil: unknown),
// or "".
func cubeSampleWarning(c *models.CubeSample, residual *float64, cfg Config) string {
	if !noisyCubes(c, residual) {
		return ""
	}
	how := "--cube-sample -1 sums every document's"
	if cfg.CubeSample > 0 {
		how = "a larger --cube-sample, or -1 for every document, lowers it"
	}
	return fmt.Sprintf("the third moment's cubes were summed over a sample of %.1f%% of the documents, whose error (%.3g of the moment) is more than %g of the model's misfit to it (residual %.3g): %s",
		100*c.Rate, c.StdErr, cubeWarnShare, *residual, how)
}

// tripleFloat32 reports whether the whitened triple statistics form their
// partial sums (a batch's, the W-terms' pieces) in float32: unless
// float64Sums, or Implicit, the exact cross-check of the packed tensor.
func (cfg Config) tripleFloat32() bool { return !cfg.float64Sums && !cfg.Implicit }

// Third names a representation of the whitened third moment (Config.Third).
type Third string

// The representations of the third moment, and Auto for the plan's choice.
const (
	Auto     Third = "auto"
	Explicit Third = "explicit"
	Sketch   Third = "sketch"
	Rows     Third = "implicit"
)

// solverFor returns the solver a fit of representation t uses: cfg.Solver
// when set; the simultaneous power method where every contraction is
// costly (a pass over the rows on disk, or FFTs over the sketch) or where
// EM passes follow (the spectral topics are then only EM's start, which
// need not be polished); for the explicit tensor of a pure spectral fit
// (cfg.EM.Passes 0) orthogonal joint diagonalisation, with its plug-in
// stage ("ojd") up to ojdPlugInMaxK topics and without it ("ojd0") up to
// jdMaxK, and RTPM above.
func (cfg Config) solverFor(t Third) string {
	switch {
	case cfg.Solver != "":
		return cfg.Solver
	case t != Explicit || cfg.EM.Passes > 0:
		return "simultaneous"
	case cfg.K <= ojdPlugInMaxK:
		return "ojd"
	case cfg.K <= jdMaxK:
		return "ojd0"
	}
	return "rtpm"
}

// ojdPlugInMaxK is the largest k whose pure spectral fit runs ojd's
// plug-in stage: its k projections along the first stage's factors make
// each Jacobi sweep O(k⁴), which pays for itself in perplexity only at the
// smaller k.
const ojdPlugInMaxK = 64

// jdMaxK is the largest k whose pure spectral fit defaults to joint
// diagonalisation, the largest k it has been compared with RTPM at.
const jdMaxK = 128

// rtpmStarts caps RTPM's random starts per topic when Config.Restarts is 0
// (the solver's own default is max(20, k)). A block phase runs until its
// slowest start settles, so the solve's cost grows faster than linearly in
// the starts, while only the best start of each block is kept; more starts
// than this moved no topic measurably.
const rtpmStarts = 30

// restartsFor is the Restarts the named solver gets: cfg.Restarts when
// set, at most rtpmStarts for RTPM, else 0 (the solver's default).
func (cfg Config) restartsFor(solver string) int {
	if cfg.Restarts == 0 && solver == "rtpm" {
		return min(max(20, cfg.K), rtpmStarts)
	}
	return cfg.Restarts
}

// DefaultExactDim is the largest vocabulary whitened exactly by default: one
// product with the d×d identity costs nnz·d, cheap at this size.
const DefaultExactDim = 300

// sketchZeta is the number of non-zeros per row of the sparse sign sketch.
const sketchZeta = sketch.DefaultSparsity

// Progress reports the state of a fit.
type Progress struct {
	// Pass counts passes over the data from 1; Stage says what it computes:
	// "second-moment" (products M2·Ω for the whitening), "third-moment"
	// (with the power pass's products, where the two are one pass: see
	// FitRecord.PowerFused),
	// or "solve" for the contractions of a solve over rows on disk or a
	// tensor sketch (each a pass over the rows or a set of FFTs, minutes
	// apiece at large k; the packed tensor's solve is not reported).
	Pass  int
	Stage string
	// Docs is the number of documents read so far in this pass; in the
	// solve, the rows read so far in the current contraction.
	Docs int64
	// Contraction counts the solve's contractions from 1 and Rows is the
	// number of rows each reads (0 for a sketch); both are 0 outside the
	// solve.
	Contraction int
	Rows        int64
	// K is, in a sweep over k (FitK), the number of topics of the model
	// the report is about: the spectral passes a k takes of its own, and
	// each model's EM passes and bounds. 0 in a single fit, and for the
	// largest k's spectral passes when the smaller k's starts come from
	// them.
	K int
	// Done is set on the last call of a pass.
	Done    bool
	Elapsed time.Duration
	// Bound is, on the last call of an EM pass (EMPass), the training
	// bound per token the pass measured for the parameters it started from
	// (over the sample's tokens for a pass on the sample).
	Bound float64
}

// The stages of the EM passes (Progress.Stage): a pass over every
// document, one on the seeded sample of a large corpus's documents, and
// one on that sample's first half (em_sample.go).
const (
	StageEM           = "em"
	StageEMSample     = "em-sample"
	StageEMSampleHalf = "em-sample-half"
)

// EMPass reports whether p is of an EM pass, whose last call carries its
// Bound.
func (p Progress) EMPass() bool {
	return p.Stage == StageEM || p.OnSample()
}

// OnSample reports whether p is of an EM pass on the sample of a large
// corpus's documents (or its first half), whose documents are a share of
// the corpus's.
func (p Progress) OnSample() bool {
	return p.Stage == StageEMSample || p.Stage == StageEMSampleHalf
}

// withDefaults validates cfg against a vocabulary of d words.
func (cfg Config) withDefaults(d int) (Config, error) {
	if d <= 0 {
		return cfg, fmt.Errorf("lda: the source does not know its vocabulary size; give the vocabulary (or a source that reports it)")
	}
	if cfg.K < 1 {
		return cfg, fmt.Errorf("lda: k=%d: the number of topics must be at least 1", cfg.K)
	}
	if cfg.K >= d {
		return cfg, fmt.Errorf("lda: k=%d topics needs a vocabulary larger than k, but it has %d words; lower k", cfg.K, d)
	}
	if cfg.Single {
		cfg.Alpha0 = 0
	} else if err := checkAlpha0(cfg.Alpha0); err != nil {
		return cfg, err
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	switch cfg.Third {
	case "":
		cfg.Third = Explicit
	case Explicit, Sketch, Rows, Auto:
	default:
		return cfg, fmt.Errorf("lda: unknown third-moment representation %q (known: %s, %s, %s, %s)", cfg.Third, Auto, Explicit, Sketch, Rows)
	}
	if cfg.Implicit && cfg.Third != Explicit {
		return cfg, fmt.Errorf("lda: Implicit (rows in memory) and Third=%s exclude each other", cfg.Third)
	}
	if cfg.SketchLen < 0 || cfg.SketchCount < 0 || cfg.Memory < 0 {
		return cfg, fmt.Errorf("lda: sketch length %d, sketch count %d and memory %d must not be negative", cfg.SketchLen, cfg.SketchCount, cfg.Memory)
	}
	if cfg.SketchLen == 1 {
		return cfg, fmt.Errorf("lda: sketch length 1: a tensor sketch needs at least 2 buckets")
	}
	// Refused before the spectral passes, not after them.
	if cfg.EM.Passes > 0 {
		if err := cfg.EM.withDefaults().checkOnline(); err != nil {
			return cfg, err
		}
	}
	if cfg.Memory == 0 {
		cfg.Memory = DefaultMemory()
	}
	if cfg.ExactDim == 0 {
		cfg.ExactDim = DefaultExactDim
	}
	if cfg.Oversample == 0 {
		// Ten extra columns suffice: topics are mapped back through M̂2·W,
		// so W only has to span them roughly.
		cfg.Oversample = sketch.DefaultOversample
	}
	return cfg, nil
}

// checkAlpha0 accepts finite positive concentrations.
func checkAlpha0(a0 float64) error {
	switch {
	case a0 == 0:
		return fmt.Errorf("lda: alpha0 (the Dirichlet concentration α₀) must be given: a finite number > 0 (1 is a common choice)")
	case math.IsNaN(a0) || math.IsInf(a0, 0) || a0 < 0:
		return fmt.Errorf("lda: alpha0=%g: the Dirichlet concentration must be a finite number > 0 (1 is a common choice)", a0)
	}
	return nil
}

// exact reports whether a vocabulary of d words is whitened exactly.
func (cfg Config) exact(d int) bool { return d <= cfg.ExactDim }

// sketchCols is the number of columns of the first sketch for d words.
func (cfg Config) sketchCols(d int) int {
	if cfg.exact(d) {
		return d
	}
	return min(cfg.K+max(0, cfg.Oversample), d)
}

// m2Coef is c in M2 = E2 − c·M1M1ᵀ: α₀/(α₀+1) for LDA, 0 for one topic.
func (cfg Config) m2Coef() float64 {
	if cfg.Single {
		return 0
	}
	return cfg.Alpha0 / (cfg.Alpha0 + 1)
}

func (cfg Config) modelName() string {
	if cfg.Single {
		return "topic"
	}
	return "lda"
}
