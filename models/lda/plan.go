package lda

import (
	"fmt"
	"github.com/streamfit/streamfit/solver"
	"math"
	"strings"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/internal/cpuspeed"
	"github.com/streamfit/streamfit/internal/sysinfo"
	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// Plan is how a fit holds its third moment, chosen from k, the vocabulary,
// the number of documents and a memory budget, with the predicted cost of
// every representation. PlanFit makes it; Fit follows it.
type Plan struct {
	// Third is the representation the fit uses; Auto is set when the cost
	// model chose it (Config.Third == Auto), and Reason says why.
	Third  Third  `json:"third"`
	Auto   bool   `json:"auto"`
	Reason string `json:"reason"`
	// Solver is the decomposition the fit runs on it.
	Solver string `json:"solver"`
	// K, D, Docs and NNZ are what the prediction assumed (Docs and NNZ −1
	// when the source did not know them).
	K    int   `json:"k"`
	D    int   `json:"d"`
	Docs int64 `json:"docs"`
	NNZ  int64 `json:"nnz"`
	// Tokens is the documents' tokens, estimated from the first documents
	// (NNZ when unknown): they size the EM passes' sample.
	Tokens int64 `json:"tokens,omitempty"`
	// Format is the source's (stream.Info.Format): text formats cost more
	// to decode.
	Format string `json:"format,omitempty"`
	// NNZEstimated is set when NNZ was estimated from the first documents
	// (PlanSource) rather than read from the source's metadata.
	NNZEstimated bool `json:"nnz_estimated,omitempty"`
	// Memory is the budget in bytes; DiskFree the free space where the rows
	// would go (0 when unknown; left out of JSON, so that a recorded plan
	// does not change between runs on the same input).
	Memory   int64 `json:"memory_budget"`
	DiskFree int64 `json:"-"`
	// SketchLen and SketchCount size the sketch of the Sketch representation.
	SketchLen   int `json:"sketch_len,omitempty"`
	SketchCount int `json:"sketch_count,omitempty"`
	// Predicted is the cost of the chosen representation; Options lists all
	// three.
	Predicted Cost   `json:"predicted"`
	Options   []Cost `json:"options"`
	// Revised is set in a plan revised after the whitening (Revise): the
	// first sketch did not decay and the fit took the power pass.
	Revised bool `json:"revised,omitempty"`
	// Fused is set in a plan revised when the fit took the power pass and
	// the third-moment pass as one pass (FitRecord.PowerFused): the power
	// pass's forecast, and the peak with the documents that pass keeps.
	Fused bool `json:"fused,omitempty"`
	// CPUScale is this machine's speed against the machine the cost model
	// was fitted on (2: its work takes twice the CPU there), which the
	// predicted CPU seconds include: measured by a probe of about 50 ms
	// (atMachineSpeed) for a plan someone reads, 1 in the plan a fit only
	// follows. The choice of representation is made before, on the
	// reference machine's figures, so the same input gives the same plan.
	CPUScale float64 `json:"cpu_scale"`
}

// machineCPU is the CPU scale of the machine (cpuspeed.Factor); a test
// sets its own.
var machineCPU = cpuspeed.Factor

// PlanRecord is what model.json keeps of a fit's plan (fit.plan): the
// representation, whether the plan chose it, the solver and the sketch's
// size. The predictions and the reason are printed on stderr, not recorded:
// they depend on the machine and on --workers, and the model must not.
type PlanRecord struct {
	Third       Third  `json:"third"`
	Auto        bool   `json:"auto"`
	Solver      string `json:"solver"`
	SketchLen   int    `json:"sketch_len,omitempty"`
	SketchCount int    `json:"sketch_count,omitempty"`
}

// Record is the part of p that model.json keeps.
func (p *Plan) Record() *PlanRecord {
	r := &PlanRecord{Third: p.Third, Auto: p.Auto, Solver: p.Solver}
	if p.Third == Sketch {
		r.SketchLen, r.SketchCount = p.SketchLen, p.SketchCount
	}
	return r
}

// Cost is the predicted cost of a fit in one representation. CPUSeconds is
// −1 when the number of documents or entries is unknown.
type Cost struct {
	Third Third `json:"third"`
	// Passes over the source (the whitening's and the third moment's),
	// without the automatic power pass; PowerPass is set when the fit
	// takes that one more pass if its first sketch does not decay (the
	// default PowerIters with a randomized whitening that has extra
	// columns), which only pass 1 can tell: CPUSecondsPower is then the
	// CPU time with it.
	Passes          int     `json:"passes"`
	PowerPass       bool    `json:"power_pass,omitempty"`
	CPUSecondsPower float64 `json:"cpu_seconds_power,omitempty"`
	// Contractions T(I,Θ,Θ) the solver is expected to make; for the rows on
	// disk each is one more pass over them.
	Contractions int `json:"contractions"`
	// CPUSeconds is the predicted CPU time (user + system, all cores) of
	// the fit: what could be calibrated on a shared machine. On two idle
	// cores the wall time lies between CPUSeconds/2 and CPUSeconds (the
	// passes' decoding and accumulation and the GEMMs use both cores, the
	// whitening's SVDs mostly one); fits given free cores kept 1.4–1.9 of
	// them busy, so about CPUSeconds/1.4–CPUSeconds/1.9; on a loaded
	// machine it is CPUSeconds divided by the cores the fit gets.
	CPUSeconds float64 `json:"cpu_seconds"`
	// EM is the predicted cost of the EM passes, which CPUSeconds (and
	// CPUSecondsPower) include: their number is the stopping rule's, so
	// the prediction assumes a typical one (EMCost).
	EM *EMCost `json:"em,omitempty"`
	// pass, power and fixed are the parts of CPUSeconds (before EM) that
	// Taken adds up again for the passes a fit took: the first whitening
	// pass and the third-moment pass, a power pass, and the rest (the
	// solve, the moments, the process).
	pass, power, fixed float64
	// pairSums is the share of pass that the pair sums of the
	// third-moment pass take (Taken leaves it out for a fit that took them
	// from its power pass: FitRecord.PairFromPower).
	pairSums float64
	// fused is what the power pass and the third-moment pass as one pass
	// (fused.go) change against the two apart, negative: a decoding, the
	// gathers and the regrouping of the third-moment pass saved, its cubes
	// summed from the sample's documents in memory, a scatter of width
	// cols added (CPUSecondsPower counts it; Taken for a fit that records
	// FitRecord.PowerFused). 0 where the fit would not fuse them.
	fused float64
	// cubes is the cubes' share of pass over every document, and cubeRate
	// the share of the documents pass assumes (cubeSample without a
	// negative direction): Taken prices the sample the fit took.
	cubes, cubeRate float64
	// emModel and emDocs are the EM passes' live bytes (before gcSlack): a
	// model's own (its topics, statistics and scratch) and the documents
	// they keep in memory, which a sweep's models share; base is what
	// PeakBytes adds to the live bytes (the process, batches in flight).
	emModel, emDocs, base float64
	// PeakBytes is the predicted peak resident memory (VmHWM); DiskBytes
	// the temporary disk space.
	PeakBytes int64 `json:"peak_bytes"`
	DiskBytes int64 `json:"disk_bytes,omitempty"`
	// RelError is, for the sketch, the predicted relative error of a
	// contraction of the whitened tensor (0 for the exact representations).
	RelError float64 `json:"rel_error,omitempty"`
	// Fits reports whether PeakBytes is within the budget and DiskBytes
	// within the free disk; Why says what rules it out, when something does.
	Fits bool   `json:"fits"`
	Why  string `json:"why,omitempty"`
}

// DefaultMemory is the default budget of the plan: half the physical memory,
// or 2 GiB when that is unknown.
func DefaultMemory() int64 {
	if total := sysinfo.PhysicalMemory(); total > 0 {
		return total / 2
	}
	return 2 << 30
}

// ParseBytes reads a size such as 2G, 512M, 1.5GiB or 1000000
// (models.ParseBytes).
func ParseBytes(s string) (int64, error) { return models.ParseBytes(s) }

// Cost-model constants: CPU time (user + system, all cores) and peak RSS.
// The passes' costs per entry and per document, the decoding, the EM
// passes' and the process's own are fitted to the stages of default fits of
// real and generated corpora (k = 10–100, up to 1.5 million documents;
// TestPlanCalibration holds the prediction for the passes taken within
// 1.5× of every one of them); the solver's and the moments' rates to fits
// of 20,000–100,000 documents at k=10/50/100. bench/lda/SCALE.md records
// the fits and the commands that refit the constants. Times in
// nanoseconds, rates in flops per nanosecond of CPU.
const (
	// nsPerNNZ is a pass's cost per stored entry apart from the k-wide
	// work: decoding, regrouping, the per-term scalars (28–30 in the
	// second-moment and the rows' third-moment passes).
	nsPerNNZ = 28.0
	// nsPerNNZCol is a whitening pass's cost per entry and sketch column
	// (0.36: 36 ns per entry at 20 columns, 68 at 110).
	nsPerNNZCol = 0.36
	// nsPerNNZK is the third-moment pass's cost per entry and whitened
	// dimension (gathers and scatters of k-wide rows): 0.85.
	nsPerNNZK = 0.85
	// bigSketchBytes and bigSketchSlow: when the whitening's d×cols
	// float64 sums exceed this size, the per-entry costs are this much
	// higher (cache misses; 1.35 at d=100,000, k=100 against d=5,000).
	bigSketchBytes = 32 << 20
	bigSketchSlow  = 1.35
	// powerPassSlow is the cost of a power pass (a dense basis instead of
	// the sparse sign sketch) relative to the first whitening pass: 1.46
	// measured at d=100,000, k=100.
	powerPassSlow = 1.5
	// nsPerDocK is the per-document, per-dimension cost of a pass
	// without cubes (scaling, the row hook's conversion).
	nsPerDocK = 0.5
	// cube32 is the rate of the third-moment pass's per-document float32
	// cubes (n·k·k(k+1)/2·2/3 flops): 7–15 measured at k=50 and 100.
	cube32 = 12.0
	// gemm64 is the float64 GEMM rate of gonum: the moments' d·k³ W-terms
	// (6.3–6.8 at k=100) and the whitening's SVDs (≈10·d·cols² flops a
	// pass).
	gemm64 = 6.0
	// transformFlops is implicit.Transform's cost in k⁴ at the rate gemm64:
	// 2.7·k⁴ flops in GEMMs of inner dimension k, which ran at about three
	// quarters of gemm64 (0.94–1.3 s at k=200; the three k⁴ GEMMs of 6·k⁴
	// flops it replaced took 1.5–3.0 s).
	transformFlops = 3.6
	// gemm32 is the float32 GEMM rate of the moments' W-terms (formed in
	// float32 pieces: 1.4 times gemm64 at k=100).
	gemm32 = 8.4
	// jdSliceNS and jdPlugInNS are the cost, in ns per k³, of a random
	// slice of ojd's first stage with its share of the Jacobi sweeps
	// (112–118 measured at k=50 and 100, L0 = 5 and 10) and of a slice of
	// its plug-in stage (37–42).
	jdSliceNS  = 115.0
	jdPlugInNS = 40.0
	// rtpmRate is the rate of RTPM's block contractions of the packed
	// tensor (2·k·k(k+1)/2 flops per column): 4.9 at k=50, 5.6 at k=100.
	rtpmRate = 5.3
	// gemmRows is the rate of the rows' contractions (4·n·k·columns flops
	// per pass over the rows): 7.6 at k=50, 6.4 at k=100.
	gemmRows = 6.5
	// nsPerRowByte is the cost per byte of a stored row: compression in the
	// pass, and reading plus decompression in every contraction.
	nsPerRowByte = 1.0
	// nsPerRowPass is the fixed cost of a pass over the rows (workers,
	// decoders): most of the 5.8 ms a pass took at 20,000 documents,
	// k=10, where the bytes and flops modelled are ≈1 ms.
	nsPerRowPass = 4e6
	// nsFFT is c in the cost c·b·log₂b of a real FFT of length b.
	nsFFT = 1.3
	// baseBytes is a fit's resident memory apart from its statistics and
	// the decoded data in flight: the runtime, the binary, buffers (98–126
	// MB measured for the smallest fits).
	baseBytes = 100 << 20
	// inFlightMax caps the decoded data in flight, predicted as a third of
	// the decoded source (8 bytes per entry) up to this: fitted to the peak
	// RSS of fits of 20,000 to 800,000 documents, which
	// exceed baseBytes plus the statistics by 0 MB (a 5 MB file) to about
	// 100–120 MB (files of several 64 MB row groups).
	inFlightMax = 112 << 20
	// gcSlack multiplies the live heap of the statistics: the Go heap grows
	// to about twice the live data between collections.
	gcSlack = 1.6
	// dkArrays is the number of d×k float64 arrays of statistics a fit
	// holds at its peak (W in float64 and float32, Z, Z2, Ê2·W, the
	// sketch sums and the whitening's copies): 5 fits 814 MB at d=100,000,
	// k=100.
	dkArrays = 5
	// emArrays is the number of d×k float64 arrays the EM passes hold
	// besides their workers' counts: EM's topics, the expected counts and
	// their exact totals' low words (Fit drops the spectral topics once
	// EM's start holds them).
	emArrays = 3
	// rowCoderMax caps the row store's compression buffers, predicted as
	// the rows' size up to this (implicit at k=300, d=5,000: 652 MB).
	rowCoderMax = 64 << 20
	// rtpmPhaseIters and simultaneousApplies are the block contractions a
	// solve takes on average: RTPM's phases stop early (tol) after about
	// this many iterations each (k·(2·that+2) blocks in all; measured
	// fit.solver.iters / min(max(20,k),30): 125 at k=10, 748 at k=50,
	// 1545 at k=100, when every column of a block was contracted to the
	// end of its phase); the simultaneous method's block phase, evaluation
	// and polish take about this many in all (measured 19 at k=10, 25 at
	// k=50, 26 at k=100).
	rtpmPhaseIters      = 6.5
	simultaneousApplies = 25
	// rtpmActive is the share of a block's columns RTPM still contracts:
	// settled starts leave the block (solver powerPhase). Corpus M (k=50):
	// 14,606 column iterations against 21,500 when all were carried.
	rtpmActive = 0.68
	// sketchErrC is C in the sketch's relative contraction error
	// C·k^1.5/√(b·count), fitted to measured contraction errors.
	sketchErrC = 0.35
	// sketchLanesMem is implicit's number of partial sketches of a pass.
	sketchLanesMem = 4
	// emNSPerNNZK, emNSPerNNZ and emNSPerDocK are an EM pass's cost per
	// entry and topic (the E-step's first iteration over all topics and
	// its later ones over the active few), per entry (the statistics'
	// commit) and per document and topic (digammas, the bound, the
	// weights' statistics); nsDecode a pass's decoding per entry, which
	// passes from memory skip.
	emNSPerNNZK = 3.5
	emNSPerNNZ  = 120.0
	emNSPerDocK = 60.0
	// nsPerDocPass is a pass's cost per document apart from its entries
	// (normalisers, the regrouping's bookkeeping), which corpora of short
	// documents feel; nsProcess the process's own (start, the plan's look
	// at the first documents, the model file).
	nsPerDocPass = 600.0
	nsProcess    = 0.5e9
	// maxSketchErr is the predicted sketch error the default sketch size
	// aims at: at k=10 (20,000 documents of 200 words over 2,000) 1024×3
	// (predicted 0.2) leaves the simultaneous method and RTPM unconverged,
	// 2048×3 (0.14) gives mean ℓ1 0.155, 4096×3 (0.10) 0.063 and 8192×3
	// 0.055 against 0.048 explicit.
	maxSketchErr = 0.1
)

// EMCost is the predicted CPU of the EM passes: PassSeconds for a pass over
// every document and SampleSeconds for one on the sample of a larger
// corpus (with the held-out sample's score; HalfSeconds on the sample's
// first half), and the passes of each kind the prediction assumes
// (SamplePasses counts the HalfPasses). On the real corpora measured the
// stopping rule took 4 to 6 passes; on data drawn from LDA itself 2.
type EMCost struct {
	PassSeconds   float64 `json:"pass_seconds"`
	Passes        int     `json:"passes"`
	SampleSeconds float64 `json:"sample_seconds,omitempty"`
	SamplePasses  int     `json:"sample_passes,omitempty"`
	HalfSeconds   float64 `json:"half_seconds,omitempty"`
	HalfPasses    int     `json:"half_passes,omitempty"`
}

// Seconds is the CPU of full passes over every document and sample passes
// on the sample, the first half of them on its first half.
func (e *EMCost) Seconds(full, sample, half int) float64 {
	if e == nil || full+sample == 0 {
		return 0
	}
	return float64(full)*e.PassSeconds + float64(sample-half)*e.SampleSeconds + float64(half)*e.HalfSeconds
}

// typicalEMPasses is the number of EM passes a plan assumes: the middle of
// the 4–6 the stopping rule took on the real corpora.
const typicalEMPasses = 5

// emCost predicts the EM passes of cfg over nnz entries and tokens tokens in
// docs documents.
func emCost(cfg Config, d, k, docs, nnz, tokens, again float64) *EMCost {
	em := cfg.EM.withDefaults()
	if em.Passes <= 0 || nnz < 0 {
		return nil
	}
	// A pass: the E-step per entry and topic and per document and topic,
	// the statistics' commit per entry; a pass over the source decodes
	// too, one from the documents in memory does not.
	pass := func(n, z float64) float64 {
		return (z*(emNSPerNNZK*k+emNSPerNNZ) + n*emNSPerDocK*k) / 1e9
	}
	c := &EMCost{Passes: min(em.Passes, typicalEMPasses)}
	read := again * nnz / 1e9
	rate := 1.0
	sample := float64(em.sampleTokens(int(d), int(k)))
	if !em.Online && sample > 0 && tokens > sample {
		rate = sample / tokens
	}
	if em.Online || sample <= 0 {
		// Every pass reads the source.
		c.PassSeconds = pass(docs, nnz) + read
		return c
	}
	// Fit's third-moment pass keeps the documents the first EM pass needs
	// (emTap): no pass over them decodes the source.
	if rate >= 1 {
		c.PassSeconds = pass(docs, nnz)
		return c
	}
	// The sample's passes (and the held-out sample's score) from memory,
	// to their cap: their
	// tolerance (em.SampleTol) is tight, and on real text they reach it;
	// then em.FullPasses over the source, which the sample's learning
	// curve may skip.
	held := rate * heldOutShare
	c.SampleSeconds = pass(docs*(rate+held), nnz*(rate+held))
	c.HalfSeconds = pass(docs*(rate/2+held), nnz*(rate/2+held))
	// The half's passes at their cap, where the stopping rule usually
	// ends them too (em_sample.go).
	c.SamplePasses, c.HalfPasses = em.samplePasses(), em.halfPasses()
	c.PassSeconds = pass(docs, nnz) + read
	c.Passes = max(em.FullPasses, 0)
	return c
}

// PlanFit predicts the cost of fitting cfg to a source described by info in
// each representation of the third moment and picks one: cfg.Third when it
// is not Auto, else the fastest representation whose peak memory fits
// cfg.Memory and whose rows fit the free disk, the sketch only when neither
// exact representation fits (its accuracy is limited by its size), and the
// smallest when none fits.
// Its CPU figures are at this machine's speed (atMachineSpeed).
func PlanFit(info stream.Info, cfg Config) (*Plan, error) {
	p, err := planFit(info, -1, cfg)
	if err != nil {
		return nil, err
	}
	return p.atMachineSpeed(), nil
}

// planFit is PlanFit for a source of tokens tokens (−1: unknown, taken as
// its entries), with the reference machine's CPU figures.
func planFit(info stream.Info, tokens int64, cfg Config) (*Plan, error) {
	cfg, err := cfg.withDefaults(info.Terms)
	if err != nil {
		return nil, err
	}
	p := &Plan{K: cfg.K, D: info.Terms, Docs: info.Rows, NNZ: info.NNZ, Tokens: tokens, Format: info.Format, Memory: cfg.Memory, DiskFree: sysinfo.DiskFree(cfg.RowDir)}
	if p.Docs < 0 || p.NNZ < 0 {
		p.Docs, p.NNZ = -1, -1
	}
	if p.Tokens < 0 {
		p.Tokens = p.NNZ
	}
	p.SketchLen, p.SketchCount = cfg.sketchSize()
	for _, t := range []Third{Explicit, Rows, Sketch} {
		p.Options = append(p.Options, p.cost(cfg, t))
	}
	p.CPUScale = 1
	if cfg.Third != Auto {
		p.Third, p.Reason = cfg.Third, "chosen by the caller"
	} else {
		p.Auto = true
		p.Third, p.Reason = p.choose()
	}
	p.predict()
	p.Solver = cfg.solverFor(p.Third)
	return p, nil
}

// machineFits refuses a plan whose predicted peak is more than the machine's
// physical memory (when known): the fit would die of it, after its passes.
// A vocabulary inferred from the largest term id (info has no words) is
// named as the likely cause.
func (p *Plan) machineFits(info stream.Info) error {
	total := sysinfo.PhysicalMemory()
	if total <= 0 || p.Predicted.PeakBytes <= total {
		return nil
	}
	why := ""
	if info.Vocab == nil {
		why = "; the data names no vocabulary, so d is 1 + the largest term id: check the term ids, or give the vocabulary file (stream.Options.VocabPath)"
	}
	return fmt.Errorf("lda: nothing fits: the %s plan needs about %s, more than the machine's %s of memory (k=%d, d=%d words%s)",
		p.Third, bytesStr(p.Predicted.PeakBytes), bytesStr(total), p.K, p.D, why)
}

// apply sets cfg to follow the plan.
func (p *Plan) apply(cfg Config) Config {
	cfg.Third = p.Third
	if cfg.Third == Sketch {
		cfg.SketchLen, cfg.SketchCount = p.SketchLen, p.SketchCount
	}
	return cfg
}

// choose picks the representation (see PlanFit) and says why.
func (p *Plan) choose() (Third, string) {
	by := map[Third]Cost{}
	for _, c := range p.Options {
		by[c.Third] = c
	}
	ex, rows, sk := by[Explicit], by[Rows], by[Sketch]
	switch {
	case ex.Fits && rows.Fits:
		if rows.CPUSeconds >= 0 && rows.CPUSeconds < ex.CPUSeconds {
			return Rows, "both exact representations fit; the rows on disk are predicted faster"
		}
		return Explicit, "the packed k×k×k tensor fits the memory budget and is the fastest exact representation"
	case ex.Fits:
		return Explicit, "the packed k×k×k tensor fits the memory budget (" + rows.Why + ")"
	case rows.Fits:
		return Rows, "the packed k×k×k tensor does not fit (" + ex.Why + "); the rows on disk do"
	case sk.Fits:
		return Sketch, fmt.Sprintf("neither exact representation fits (%s; %s); the tensor sketch does, with a predicted contraction error of %.2g", ex.Why, rows.Why, sk.RelError)
	}
	best := ex
	for _, c := range []Cost{rows, sk} {
		if c.PeakBytes < best.PeakBytes {
			best = c
		}
	}
	return best.Third, "nothing fits the budget; using the representation with the smallest predicted memory"
}

// cost predicts a fit in representation t.
func (p *Plan) cost(cfg Config, t Third) Cost {
	k, d := float64(p.K), float64(p.D)
	w := float64(max(1, cfg.Workers))
	pairs := k * (k + 1) / 2
	known := p.Docs >= 0
	n, nnz := float64(max(p.Docs, 0)), float64(max(p.NNZ, 0))
	c := Cost{Third: t, Passes: 2 + max(cfg.PowerIters, 0)}
	if cfg.exact(p.D) {
		c.Passes = 2
	}
	// The power pass Fit adds when the first sketch does not decay
	// (whitening, autoPowerTail).
	c.PowerPass = !cfg.exact(p.D) && cfg.PowerIters == 0 && cfg.sketchCols(p.D) > cfg.K
	// Statistics of size d·k that every representation keeps (dkArrays).
	dk := d * k * 8 * dkArrays
	cols := float64(cfg.sketchCols(p.D))
	slow := 1.0
	if d*cols*8 > bigSketchBytes {
		slow = bigSketchSlow
	}
	// A whitening pass: the entries, their gathers of sketch rows, the
	// documents, and the SVDs of the d×cols sketch that end it; the first
	// pass decodes the source as it is, the later ones as they read it
	// again (a spill file for slow formats).
	first, again := decodeNS(p.Format)
	pairNS := slow*(nsPerNNZ+nsPerNNZCol*cols)*nnz + nsPerDocPass*n + 10*d*cols*cols/gemm64
	powerNS := powerPassSlow*pairNS + again*nnz
	// The whitening passes (power passes cost more: a dense basis) and
	// the third-moment pass's k-wide gathers and scatters.
	thirdNS := slow*(nsPerNNZ+nsPerNNZK*k)*nnz + nsPerDocPass*n + again*nnz
	// A third of that k-wide work is the pair sums, which a fit whose
	// power pass found negative directions takes from that pass instead
	// (basis.e2w).
	pairSumsNS := slow * nsPerNNZK * k * nnz / 3
	passNS := pairNS + first*nnz + float64(c.Passes-2)*powerNS + thirdNS
	var live, ns, powerCubes float64
	solverName := cfg.solverFor(t)
	blockCols := 2 * math.Min(k, k+math.Ceil(k/10)+2)
	applies := simultaneousApplies
	colShare := 1.0 // of a block's columns contracted, on average
	if solverName != "simultaneous" {
		applies = int(k * (2*rtpmPhaseIters + 2))
		blockCols = math.Max(20, k)
		if r := cfg.restartsFor(solverName); r > 0 {
			blockCols = float64(r)
		}
		colShare = rtpmActive
	}
	c.Contractions = applies
	workCols := blockCols * colShare // the block's memory is blockCols wide
	solveNS := float64(applies) * 2 * k * pairs * workCols / rtpmRate
	if jd := solverName == "ojd" || solverName == "ojd0"; jd && t == Explicit {
		// Joint diagonalisation: L0 random slices and their Jacobi sweeps,
		// and with the plug-in stage k more slices.
		l0 := solver.DefaultProjections(p.K, solver.Orthogonal)
		c.Contractions = l0
		solveNS = jdSliceNS * float64(l0) * k * k * k
		if solverName == "ojd" {
			c.Contractions += p.K
			solveNS += jdPlugInNS * k * k * k * k
		}
	}
	switch t {
	case Explicit:
		// Pass: Y3 in float64 plus each worker's float32 partial; then
		// Moments' W-term buffers (Y3, the total and one piece per
		// worker), then Transform's: the packed tensor and its image, the
		// tensor's k × k(k+1)/2 half unfolding and a block of its slices.
		pass := pairs * k * (8 + 4*w)
		moments := pairs * k * 8 * (2 + w)
		transform := pairs * k * 8 * 1.8
		live = dk + math.Max(pass, math.Max(moments, transform))
		// The cubes, over a sample of the documents where the fit
		// takes one (cubeSample; with the power pass, the whitening
		// has found negative directions).
		cubesNS := n * k * pairs * 2 / 3 / cube32
		rate, ratePower := p.cubeRate(cfg, 0), p.cubeRate(cfg, 1)
		ns = passNS + cubesNS*rate + d*k*k*k*2/3/gemm32 + transformFlops*k*k*k*k/gemm64 + solveNS
		c.pass = (pairNS + first*nnz + thirdNS + cubesNS*rate) / 1e9
		c.cubes, c.cubeRate = cubesNS/1e9, rate
		powerCubes = cubesNS * (ratePower - rate)
		if fuses(cfg) && ratePower < 1 {
			// The power pass gathers the third moment's statistics over
			// its basis (one more scatter, of y/n3, cols wide); the
			// third-moment pass then runs over the kept sample only, from
			// memory (fused.go). The kept documents and the cols-wide sums
			// are live meanwhile.
			fusedNS := slow*nsPerNNZK*cols/3*nnz - (1-ratePower)*(thirdNS-pairSumsNS) - ratePower*again*nnz
			c.fused = fusedNS / 1e9
		}
	case Rows:
		rowBytes := 4*k + 8
		c.DiskBytes = int64(n * rowBytes)
		perApply := nsPerRowPass + n*rowBytes*nsPerRowByte + 4*n*k*workCols/gemmRows + 8*d*k*workCols/gemm64
		// Each worker's chunk of rows, its product with the block and that
		// product squared; the block's workspace; the W-terms' four
		// blocks of words × L (implicit.Operator.Apply takes the words
		// implicit.WRows at a time); the compressors.
		chunk := implicit.DefaultChunkRows * (k*8*2 + 2*blockCols*8)
		live = dk + w*(chunk+4<<20) + (w+2)*k*blockCols*8 + 4*math.Min(d, implicit.WRows)*blockCols*8 + math.Min(float64(c.DiskBytes), rowCoderMax)
		ns = passNS + n*k*nsPerDocK + n*rowBytes*nsPerRowByte + float64(applies)*perApply
	case Sketch:
		b, count := float64(p.SketchLen), float64(p.SketchCount)
		fft := nsFFT * b * math.Log2(b)
		live = dk + (sketchLanesMem+w+1)*count*(b/2+1)*16
		ns = passNS + n*count*(fft+k) + 2*d*count*fft + float64(applies)*workCols*count*4*fft
		c.RelError = sketchError(p.K, p.SketchLen, p.SketchCount)
	}
	if cfg.EM.Passes > 0 {
		// The EM passes after the spectral fit: EM's topics, the
		// statistics and their exact totals' low words (emArrays), and
		// each worker's expected counts of a piece, k for each of its
		// distinct words.
		arrays := float64(emArrays)
		if cfg.EM.Online {
			arrays++ // the running expected counts
		}
		emLive := d*k*8*arrays + w*math.Min(d, EMPieceEntries)*k*8
		c.emModel = emLive
		if em := cfg.EM.withDefaults(); !em.Online && em.sampleTokens(p.D, p.K) > 0 {
			// The documents the passes keep in memory (8 bytes an entry):
			// the corpus, up to the sample's tokens (entries are at most
			// tokens) and the held-out sample's; with a sample, the
			// parameters an M-step on it may have to restore.
			sample := float64(em.sampleTokens(p.D, p.K))
			kept := float64(sampleLimit(em.sampleTokens(p.D, p.K)))
			if known {
				kept = math.Min(kept, nnz)
			}
			emLive += kept * 8
			c.emDocs = kept * 8
			if !known || float64(p.Tokens) > sample {
				// The parameters before an M-step on the sample, the
				// statistics of half of it and the parameters the
				// learning curve scores (fullGain).
				emLive += 4 * d * k * 8
				c.emModel += 4 * d * k * 8
			}
			if known && n > 0 && float64(p.Tokens) > sample {
				// The warm starts of the sample's documents (warmStarts;
				// its entries are at most its tokens): two sets (the last
				// pass's, read, and this pass's, written) of up to
				// warmTopics entries each (8 bytes), and about 64 bytes of
				// index, for documents of the corpus's mean size.
				perDoc := math.Max(nnz/n, 1)
				warm := sample / perDoc * (2*8*math.Min(warmTopics, perDoc) + 64)
				emLive += warm
				c.emModel += warm
			}
		}
		// The documents kept for EM are live from the third-moment pass on.
		live = math.Max(live+c.emDocs, emLive)
	}
	inFlight := float64(inFlightMax)
	if known {
		inFlight = math.Min(inFlight, nnz*8/3)
	}
	c.base = baseBytes + inFlight
	c.PeakBytes = int64(c.base + gcSlack*live)
	ns += nsProcess
	if c.pass == 0 {
		c.pass = (pairNS + first*nnz + thirdNS) / 1e9
	}
	c.power, c.pairSums = powerNS/1e9, pairSumsNS/1e9
	c.fixed = ns/1e9 - c.pass - float64(c.Passes-2)*c.power
	c.EM = emCost(cfg, d, k, n, nnz, float64(p.Tokens), again)
	emSeconds := c.EM.Seconds(c.EM.passes())
	c.CPUSeconds = ns/1e9 + emSeconds
	if c.PowerPass {
		c.CPUSecondsPower = (ns+powerNS+powerCubes-pairSumsNS)/1e9 + c.fused + emSeconds
	}
	if !known {
		c.CPUSeconds, c.CPUSecondsPower = -1, -1
	}
	var why []string
	if c.PeakBytes > p.Memory {
		why = append(why, fmt.Sprintf("needs %s of memory, budget %s", bytesStr(c.PeakBytes), bytesStr(p.Memory)))
	}
	switch {
	case t == Rows && !known:
		why = append(why, "the number of documents is unknown, so its disk need is too")
	case t == Rows && p.DiskFree > 0 && float64(c.DiskBytes) > 0.9*float64(p.DiskFree):
		why = append(why, fmt.Sprintf("needs %s of disk, %s free", bytesStr(c.DiskBytes), bytesStr(p.DiskFree)))
	}
	c.Fits = len(why) == 0
	c.Why = strings.Join(why, "; ")
	return c
}

// atMachineSpeed sets p's CPU figures, the reference machine's, to this
// machine's speed (CPUScale, measured once per process) and returns p. A
// plan of unknown documents has no CPU figures and is left as it is.
func (p *Plan) atMachineSpeed() *Plan {
	if p.Docs < 0 || p.CPUScale != 1 {
		return p
	}
	p.CPUScale = machineCPU()
	for i := range p.Options {
		p.Options[i].scaleCPU(p.CPUScale)
	}
	p.predict()
	return p
}

// predict sets Predicted to the option of the chosen representation (a
// copy sharing its EM cost).
func (p *Plan) predict() {
	for _, c := range p.Options {
		if c.Third == p.Third {
			p.Predicted = c
		}
	}
}

// fusedFits reports whether the fit's peak with extra bytes more (what the
// power pass and the third-moment pass as one keep: fusedBytes) fits p's
// memory budget; a plan without a budget lets it. The plan's peak leaves
// them out, so that the choice of the representation does not depend on
// them: where they do not fit, the passes run apart.
func (p *Plan) fusedFits(extra int64) bool {
	return p == nil || p.Memory <= 0 || p.Predicted.PeakBytes+extra <= p.Memory
}

// scaled reports whether p's CPU figures are at a measured speed other
// than the reference machine's.
func (p *Plan) scaled() bool { return p.CPUScale > 0 && p.CPUScale != 1 }

// scaleCPU multiplies c's predicted CPU times by f, the machine's CPU scale.
func (c *Cost) scaleCPU(f float64) {
	if c.CPUSeconds < 0 {
		return
	}
	c.CPUSeconds *= f
	c.CPUSecondsPower *= f
	c.pass, c.power, c.fixed, c.cubes, c.pairSums, c.fused = f*c.pass, f*c.power, f*c.fixed, f*c.cubes, f*c.pairSums, f*c.fused
	if e := c.EM; e != nil {
		e.PassSeconds, e.SampleSeconds, e.HalfSeconds = f*e.PassSeconds, f*e.SampleSeconds, f*e.HalfSeconds
	}
}

// sketchSize returns the sketch length and count of cfg: its own when set,
// else DefaultSketch.
func (cfg Config) sketchSize() (b, count int) {
	b, count = DefaultSketch(cfg.K, cfg.Memory)
	if cfg.SketchLen > 0 {
		b = cfg.SketchLen
	}
	if cfg.SketchCount > 0 {
		count = cfg.SketchCount
	}
	return b, count
}

// sketchError is the predicted relative error of a contraction of the
// whitened k-topic tensor held as count sketches of length b.
func sketchError(k, b, count int) float64 {
	return sketchErrC * math.Pow(float64(k), 1.5) / math.Sqrt(float64(b)*float64(count))
}

// sketchAdvice says what to do about a sketch too coarse for k topics: the
// length whose predicted error is maxSketchErr, or, when that is beyond the
// largest sketch (2²²; at k=1000 it is ≈2³²), the exact representations.
func sketchAdvice(k, count int) string {
	b, need := sketchLenFor(k, count, func(int) bool { return true })
	if float64(b) < need {
		return fmt.Sprintf("a sketch accurate enough for k=%d would need ≈%.0g buckets per sketch, beyond the largest (%d); hold the third moment another way (Third \"implicit\" or \"explicit\")", k, need, 1<<22)
	}
	return fmt.Sprintf("raise SketchLen to %d (predicted error %.2g; the error falls as 1/√length) or SketchCount, or hold the third moment another way (Third \"implicit\" or \"explicit\")", b, sketchError(k, b, count))
}

// DefaultSketch returns the default tensor sketch for k topics within a
// memory budget: 3 sketches (combined by their median), each of the
// smallest power-of-two length whose predicted contraction error
// sketchError(k, b, 3) is at most maxSketchErr (0.1), within [2¹⁰, 2²²]
// and a quarter of the budget. The error of a sketch falls only as 1/√b,
// so at large k an accurate sketch is larger than the explicit tensor.
func DefaultSketch(k int, memory int64) (b, count int) {
	count = 3
	b, _ = sketchLenFor(k, count, func(b int) bool { return int64(sketchLanesMem+3)*int64(count)*int64(b)*8 < memory/4 })
	return b, count
}

// sketchLenFor returns the smallest power-of-two length in [2¹⁰, 2²²] whose
// predicted error for k topics and count sketches is at most maxSketchErr,
// doubling only while fits(b) holds, and the (real) length that error needs.
func sketchLenFor(k, count int, fits func(b int) bool) (b int, need float64) {
	need = math.Pow(sketchErrC*math.Pow(float64(k), 1.5)/maxSketchErr, 2) / float64(count)
	b = 1 << 10
	for float64(b) < need && b < 1<<22 && fits(b) {
		b *= 2
	}
	return b, need
}

// String is the plan in a few lines for a terminal: the choice and the
// prediction of every representation; for a revised plan (Revise), one
// line with the new prediction of the chosen representation.
func (p *Plan) String() string {
	if p.Fused {
		return fmt.Sprintf("plan revised: the second moment has negative directions, so the power pass also gathers the third moment and keeps the cube sample's documents: %s %s",
			p.Third, p.Predicted.line())
	}
	if p.Revised {
		return fmt.Sprintf("plan revised: the first sketch did not decay (σ_last/σ_k > %g), so the whitening took the power pass: %s %s",
			autoPowerTail, p.Third, p.Predicted.line())
	}
	var s strings.Builder
	docs := "unknown documents"
	if p.Docs >= 0 {
		docs = fmt.Sprintf("%d documents, %d entries", p.Docs, p.NNZ)
		if p.NNZEstimated {
			docs = fmt.Sprintf("%d documents, ≈%d entries (estimated from the first documents)", p.Docs, p.NNZ)
		}
	}
	how := "chosen"
	if !p.Auto {
		how = "forced"
	}
	fmt.Fprintf(&s, "plan: %s third moment (%s), solver %s; k=%d, %d words, %s, memory budget %s\n", p.Third, how, p.Solver, p.K, p.D, docs, bytesStr(p.Memory))
	if p.scaled() {
		fmt.Fprintf(&s, "  CPU at this machine's speed: %.2g× the cost model's reference machine (a probe of its GEMMs and scattered work)\n", p.CPUScale)
	}
	fmt.Fprintf(&s, "  why: %s\n", p.Reason)
	for _, c := range p.Options {
		mark := " "
		if c.Third == p.Third {
			mark = "*"
		}
		fmt.Fprintf(&s, "  %s %-8s %s", mark, c.Third, c.line())
		if c.Third == Sketch {
			fmt.Fprintf(&s, ", sketch %d×%d, error ≈%.2g", p.SketchLen, p.SketchCount, c.RelError)
		}
		if !c.Fits {
			fmt.Fprintf(&s, " — does not fit: %s", c.Why)
		}
		s.WriteByte('\n')
	}
	return strings.TrimRight(s.String(), "\n")
}

// line is c's passes, time and memory in words.
func (c Cost) line() string {
	passes := fmt.Sprintf("passes %d", c.Passes)
	cpu := "CPU " + seconds(c.CPUSeconds)
	if c.PowerPass {
		passes = fmt.Sprintf("passes %d (+1 if the first sketch does not decay)", c.Passes)
		if c.fused != 0 {
			passes = fmt.Sprintf("passes %d (+1 if the first sketch does not decay, one with the third-moment pass where M2 has negative directions)", c.Passes)
		}
		if c.CPUSeconds >= 0 {
			cpu = fmt.Sprintf("CPU %s (%s with the power pass)", seconds(c.CPUSeconds), seconds(c.CPUSecondsPower))
		}
	}
	s := fmt.Sprintf("%s + %d contractions, %s, peak %s", passes, c.Contractions, cpu, bytesStr(c.PeakBytes))
	if e := c.EM; e != nil && c.CPUSeconds >= 0 {
		if e.SamplePasses > 0 {
			s += fmt.Sprintf("; EM (included) %d passes on a sample (%d on its half ≈%s each, %d ≈%s each) and %d over all ≈%s each", e.SamplePasses, e.HalfPasses, seconds(e.HalfSeconds), e.SamplePasses-e.HalfPasses, seconds(e.SampleSeconds), e.Passes, seconds(e.PassSeconds))
		} else {
			s += fmt.Sprintf("; EM (included) %d passes ≈%s each", e.Passes, seconds(e.PassSeconds))
		}
	}
	if c.DiskBytes > 0 {
		s += ", disk " + bytesStr(c.DiskBytes)
	}
	return s
}

// cubeRate is the share of the documents whose cubes the third-moment
// pass sums (cubeSample), for a whitening that found negative directions
// of M̂2 (the power pass's case) or none; 1 when the corpus's tokens are
// unknown.
func (p *Plan) cubeRate(cfg Config, negative int) float64 {
	if p.Tokens < 0 {
		return 1
	}
	if s := cfg.cubeSample(p.Tokens, p.D, p.K, negative); !s.All() {
		return s.Rate
	}
	return 1
}

// Revise returns the plan as it stands once the whitening is done and the
// fit knows it takes passes passes over the source in all: nil when p
// predicted that, else (the automatic power pass was taken) a copy whose
// Predicted counts it (p.Predicted.CPUSecondsPower) and whose String is one
// line saying so. Fit hands it to Config.OnPlan.
func (p *Plan) Revise(passes int) *Plan {
	c := p.Predicted
	if !c.PowerPass || passes != c.Passes+1 {
		return nil
	}
	r := p.revised()
	r.Predicted.Passes = passes
	return r
}

// revised is a copy of p as it stands once the fit took the power pass: its
// forecast with that pass, and no other representation.
func (p *Plan) revised() *Plan {
	r := *p
	r.Options = nil
	c := &r.Predicted
	if c.PowerPass {
		c.CPUSeconds, c.CPUSecondsPower, c.PowerPass = c.CPUSecondsPower, 0, false
	}
	r.Revised = true
	return &r
}

// reviseFused returns the plan as it stands once the fit takes the power
// pass and the third-moment pass as one pass (fused.go), which keeps extra
// bytes beyond the plan's peak: the power pass's forecast, and that peak.
// Fit hands it to Config.OnPlan (the command line raises its soft memory
// limit to it).
func (p *Plan) reviseFused(extra int64) *Plan {
	r := p.revised()
	r.Predicted.PeakBytes += extra
	r.Fused = true
	return r
}

func seconds(s float64) string {
	switch {
	case s < 0:
		return "unknown"
	case s < 60:
		return fmt.Sprintf("%.1fs", s)
	case s < 3600:
		return fmt.Sprintf("%.1fmin", s/60)
	}
	return fmt.Sprintf("%.1fh", s/3600)
}

func bytesStr(b int64) string {
	if b < 1024 {
		return fmt.Sprintf("%dB", b)
	}
	f := float64(b) / 1024
	for _, u := range []string{"KiB", "MiB", "GiB"} {
		if f < 1024 {
			return fmt.Sprintf("%.1f%s", f, u)
		}
		f /= 1024
	}
	return fmt.Sprintf("%.1fTiB", f)
}

// passes is the passes over all, on the sample and on its half the
// prediction assumes.
func (e *EMCost) passes() (full, sample, half int) {
	if e == nil {
		return 0, 0, 0
	}
	return e.Passes, e.SamplePasses, e.HalfPasses
}

// Taken is the plan's prediction for the passes fit m took (a model p
// planned): its spectral passes as taken (each one more than the plan's
// two a power pass) and its EM passes as the stopping rule ended them, on
// the sample and over every document. Against the CPU the fit measured it
// checks the cost model itself, whatever the number of EM passes;
// CPUSeconds is the forecast made before the first pass, with a typical
// number of them.
func (p *Plan) Taken(m *models.Model) float64 {
	c := p.Predicted
	if c.CPUSeconds < 0 {
		return -1
	}
	full, sample, half := 0, 0, 0
	if em := m.Fit.EM; em != nil {
		full = em.Passes
		if em.Sample != nil {
			sample, half = em.Sample.Passes, em.Sample.HalfPasses
			full -= sample
		}
	}
	spectral := m.Fit.Passes - full - sample
	// The cubes over the share of the documents the fit took (and, when
	// it summed them again over every document, over both).
	pass := c.pass
	if cs := m.Fit.CubeSample; c.cubes > 0 {
		rate := 1.0
		switch {
		case cs != nil && cs.Redone:
			rate += cs.Rate
		case cs != nil:
			rate = cs.Rate
		}
		pass += c.cubes * (rate - c.cubeRate)
	}
	if m.Fit.PairFromPower {
		pass -= c.pairSums
	}
	if m.Fit.PowerFused {
		// One pass for the power pass and the third-moment pass.
		spectral++
		pass += c.fused
	}
	return pass + float64(max(spectral-2, 0))*c.power + c.fixed + c.EM.Seconds(full, sample, half)
}

// Versus says what a fit measured beside the plan: the CPU seconds the
// process used (cpu) beside the forecast and the prediction for the passes
// m took, and its peak resident memory (peak bytes; 0 when unknown, and
// then left out) beside the predicted peak.
func (p *Plan) Versus(m *models.Model, cpu float64, peak int64) string {
	var s string
	if forecast := p.Predicted.CPUSeconds; forecast < 0 {
		s = fmt.Sprintf("CPU %.1fs (the plan could not forecast it: the number of documents was unknown)", cpu)
	} else {
		taken := p.Taken(m)
		s = fmt.Sprintf("CPU %.1fs; the plan forecast %.1fs, and %.1fs for the passes taken (%.2f× the CPU used)", cpu, forecast, taken, taken/cpu)
	}
	if peak > 0 {
		s += fmt.Sprintf("; peak memory %s, the plan's %s", bytesStr(peak), bytesStr(p.Predicted.PeakBytes))
	}
	return s
}

// decodeNS is the cost per entry of decoding a source of format, by its
// first pass and by each later one: text formats parse slowly once, and the
// later passes read the compact spill file (stream.SpillAuto); columnar
// files decode at every pass; documents in memory cost nothing.
func decodeNS(format string) (first, again float64) {
	switch format {
	case "docword", "text-lines", "text-dir", "npz":
		return nsDecodeText, nsDecodeSpill
	case "memory":
		return 0, 0
	}
	return nsDecodeColumnar, nsDecodeColumnar
}

// The decoding costs per entry of decodeNS: a UCI docword file (gzip and
// text) or raw text, its spill file, and Parquet or Arrow (streamfit
// inspect: 250 ns an entry on Debian's docword.gz, 23 on a Parquet file).
const (
	nsDecodeText     = 400.0
	nsDecodeSpill    = 15.0
	nsDecodeColumnar = 22.0
)
