package shard

import "github.com/streamfit/streamfit/models"

// DenseOf is the workflow of a fit of dense rows whose passes are p (a
// dense model's models.DenseSettings.Passes, or models.DenseKind.Passes of
// its Config): each model's package says what its passes are, which of
// them take a basis, and which can be appended to.
func DenseOf(p models.Passes) Dense {
	return Dense{Plan: p.Plan, Grouped: p.Group != "", MaxPasses: p.MaxPasses}
}
