package lda

import (
	"fmt"

	"github.com/streamfit/streamfit/stream"
)

// SweepPlan is the predicted cost of FitK: the plan of every k's fit, and
// the sweep's totals.
type SweepPlan struct {
	// Plans is the plan of each k's fit (ascending k), as Fit would make
	// it from the source's metadata.
	Plans []*Plan `json:"plans"`
	// Shared reports whether the smaller k start from the largest k's
	// passes (no spectral passes of their own).
	Shared bool `json:"shared"`
	// CPUSeconds is the predicted CPU of the sweep without its scores: the
	// spectral fits it runs (every k's, or the largest k's when Shared)
	// and every k's EM passes (−1 when the number of documents is
	// unknown).
	CPUSeconds float64 `json:"cpu_seconds"`
	// PeakBytes is the predicted peak: the largest of the spectral fits'
	// and of the EM passes', which hold every model at once (d·Σk) and
	// one copy of the documents they keep in memory. Memory is the
	// budget, and Fits whether PeakBytes is within it.
	PeakBytes int64 `json:"peak_bytes"`
	Memory    int64 `json:"memory_budget"`
	Fits      bool  `json:"fits"`
}

// PlanSweep predicts the cost of FitK(src, ks, cfg, opt) for a source
// described by info: each k's plan (PlanFit, with the explicit third
// moment where the sweep shares it), the CPU of the passes the sweep
// takes and the peak of its EM passes, which refine every model at once.
func PlanSweep(info stream.Info, ks []int, cfg Config, opt SweepOptions) (*SweepPlan, error) {
	sp, err := planSweep(info, -1, ks, cfg, opt)
	if err != nil {
		return nil, err
	}
	return sp.atMachineSpeed(), nil
}

// planSweep is PlanSweep for a source of tokens tokens (−1: unknown, taken
// as its entries).
func planSweep(info stream.Info, tokens int64, ks []int, cfg Config, opt SweepOptions) (*SweepPlan, error) {
	ks, err := sweepKs(ks)
	if err != nil {
		return nil, err
	}
	top := cfg
	top.K = ks[len(ks)-1]
	if top, err = top.withDefaults(info.Terms); err != nil {
		return nil, err
	}
	blocks := sharesBlocks(top, info.Terms, opt.SharedStart)
	sp := &SweepPlan{Shared: blocks}
	var emModels, emDocs, base, spectralPeak float64
	for _, k := range ks {
		ck := cfg
		ck.K = k
		if blocks {
			ck.Third = Explicit
		}
		p, err := planFit(info, tokens, ck)
		if err != nil {
			return nil, err
		}
		sp.Plans = append(sp.Plans, p)
		c := p.Predicted
		sp.Memory = p.Memory
		emModels += c.emModel
		emDocs = max(emDocs, c.emDocs)
		base = max(base, c.base)
		spectralPeak = max(spectralPeak, float64(c.PeakBytes))
		switch {
		case c.CPUSeconds < 0 || sp.CPUSeconds < 0:
			sp.CPUSeconds = -1
		case blocks && k != top.K:
			sp.CPUSeconds += c.EM.Seconds(c.EM.passes())
		default:
			sp.CPUSeconds += c.CPUSeconds
		}
	}
	sp.PeakBytes = int64(max(spectralPeak, base+gcSlack*(emModels+emDocs)))
	sp.Fits = sp.PeakBytes <= sp.Memory
	return sp, nil
}

// sharesBlocks reports whether FitK takes the smaller k's starts from
// blocks of the largest k's moments (cfg its config, defaults set): when
// its whitening is exact or share (SweepOptions.SharedStart) asks for
// them, and its third moment may be explicit.
func sharesBlocks(cfg Config, d int, share bool) bool {
	return (share || cfg.exact(d)) && (cfg.Third == Explicit || cfg.Third == Auto) && !cfg.Implicit
}

// String is the plan in a line or two for a terminal.
func (sp *SweepPlan) String() string {
	ks := make([]int, len(sp.Plans))
	for i, p := range sp.Plans {
		ks[i] = p.K
	}
	start := "each k's spectral passes its own"
	if sp.Shared {
		start = "the smaller k's spectral starts from the largest k's passes"
	}
	fits := ""
	if !sp.Fits {
		fits = fmt.Sprintf(" — above the memory budget %s", bytesStr(sp.Memory))
	}
	speed := ""
	if len(sp.Plans) > 0 && sp.Plans[0].scaled() {
		speed = fmt.Sprintf(" (at this machine's speed, %.2g× the cost model's reference)", sp.Plans[0].CPUScale)
	}
	return fmt.Sprintf("plan: sweep k=%s (%s), CPU %s%s without the scores, peak %s%s",
		FormatKs(ks), start, seconds(sp.CPUSeconds), speed, bytesStr(sp.PeakBytes), fits)
}

// atMachineSpeed sets sp's CPU figures, the reference machine's, to this
// machine's speed (Plan.atMachineSpeed) and returns sp.
func (sp *SweepPlan) atMachineSpeed() *SweepPlan {
	if len(sp.Plans) == 0 || sp.Plans[0].scaled() {
		return sp
	}
	for _, p := range sp.Plans {
		p.atMachineSpeed()
	}
	if sp.CPUSeconds > 0 {
		sp.CPUSeconds *= sp.Plans[0].CPUScale
	}
	return sp
}
