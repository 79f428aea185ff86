package shard

import (
	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/models/gmm"
	"github.com/streamfit/streamfit/models/hmm"
	"github.com/streamfit/streamfit/models/ica"
	"github.com/streamfit/streamfit/models/markov"
	"github.com/streamfit/streamfit/models/multiview"
)

// DenseModels names the dense models, whose workflows are Dense: the
// Gaussian mixture, ICA, the three-view mixture, the HMM of sequences, and
// the Markov chain and HMM of snapshot sets.
var DenseModels = []string{"gmm", "ica", "multiview", "hmm", "markov", "hmm-snapshot"}

// GMM is the workflow of a Gaussian mixture fit with cfg. On the exact path
// (d ≤ cfg.ExactDim) pass 1 (first and second moments) takes no basis and
// can always be appended to; pass 2 (whitened third moment) takes the
// merged pass 1 as its basis, and an append to it checks the drift of the
// whitening. On the sketched path pass 1 (first moments and the sketch of
// the second moment with the seed's test matrix) can be appended to; the
// 1+PowerIters passes after it each take the range basis of the merged
// pass before, and the last (whitened third moment) the merged last
// sketch: none of these can be appended to.
func GMM(cfg gmm.Config) Dense {
	return Dense{Plan: func(path string) implicit.Planner { return &gmm.Plan{Config: cfg, Path: path} }, MaxPasses: cfg.MaxPasses()}
}

// Multiview is the workflow of a three-view mixture fit with cfg: pass 1
// (cross moments of the views) takes no basis and can always be appended
// to; pass 2 (whitened third moment) takes the merged pass 1 as its basis
// and cannot be appended to (the recovery uses pass 1's cross moments of
// exactly its rows): recompute it over all the data.
func Multiview(cfg multiview.Config) Dense {
	return Dense{Plan: func(path string) implicit.Planner { return (&multiview.Plan{Config: cfg, Path: path}).Planner() }, MaxPasses: 2}
}

// HMM is the workflow of an HMM fit from sequences with cfg: the passes of
// Multiview over the triples of consecutive steps (append to pass 1 only),
// read in order. A shard owns the sequences that begin in it (Grouped).
func HMM(cfg hmm.Config) Dense {
	return Dense{Plan: func(path string) implicit.Planner { return (&hmm.Plan{Config: cfg, Path: path}).Planner() }, Grouped: true, MaxPasses: 2}
}

// ICA is the workflow of an independent component fit with cfg. On the
// exact path (d ≤ cfg.ExactDim) pass 1 (moments up to the second) takes no
// basis and can always be appended to; pass 2 (whitened third-order
// contraction) takes the merged pass 1; the polishing passes 3, 4, ... each
// take the merged pass before (the solver's settings decide their columns).
// On the sketched path 1+PowerIters passes of the covariance's range
// finder, each taking the basis of the merged pass before, come between
// pass 1 (first moments and the seed's sketch) and the whitened pass. Only
// pass 1 can be appended to.
func ICA(cfg ica.Config) Dense {
	return Dense{Plan: func(path string) implicit.Planner { return &ica.Plan{Config: cfg, Path: path} }, MaxPasses: cfg.MaxPasses()}
}

// Markov is the workflow of a fit from snapshot sets with cfg: a Markov
// chain of one-hot rows (chain), or an HMM. Pass 1 (point and within-set
// pair moments) takes no basis and can always be appended to; pass 2
// (whitened within-set third moment) takes the merged pass 1 and cannot be
// appended to (the fit takes the moments of pass 1 it carries). Every set
// adds its own partial sums, read in order; a shard owns the sets that
// begin in it (Grouped).
func Markov(cfg markov.Config, chain bool) Dense {
	return Dense{Plan: func(path string) implicit.Planner { return &markov.Plan{Config: cfg, Path: path, Chain: chain} }, Grouped: true, MaxPasses: 2}
}
