package models

import (
	"math"

	"github.com/streamfit/streamfit/stream"
	"gonum.org/v1/gonum/blas/blas64"
)

// CheckRows rejects a batch of dense rows whose width is not d or that
// holds NaN or ±Inf, naming the row in the source at path: the check every
// model of dense rows makes of each batch.
func CheckRows(path string, b *stream.Dense, d int) error {
	if b.Cols != d {
		return stream.Errorf(path, 0, b.Start, "", stream.ErrValue, "rows have %d columns, expected d=%d", b.Cols, d)
	}
	for i, v := range b.Data[:b.Rows*b.Cols] {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return stream.Errorf(path, 0, b.Start+int64(i/d), "", stream.ErrValue, "value %v in column %d", v, i%d)
		}
	}
	return nil
}

// RowMatrix views a batch of dense rows as a rows×d matrix (no copy).
func RowMatrix(b *stream.Dense) blas64.General {
	return blas64.General{Rows: b.Rows, Cols: b.Cols, Stride: b.Cols, Data: b.Data[:b.Rows*b.Cols]}
}

// The defaults of the settings the dense models share: the dimension up
// to which the whitening is exact, the randomized sketch's extra columns
// and power passes, and the tensor decomposition. Every model hands the
// solver a whitened (orthogonally decomposable) k×k×k tensor, so the
// robust tensor power method is the default; ojd is the more accurate
// alternative at full rank and rtpm-stop the cheaper one.
const (
	DefaultExactDim   = 512
	DefaultOversample = 10
	DefaultPowerIters = 2
	DefaultSolver     = "rtpm"
)

// WhiteningDefaults sets the zero settings of a dense model's whitening to
// DefaultExactDim, DefaultOversample and DefaultPowerIters.
func WhiteningDefaults(exactDim, oversample, powerIters *int) {
	if *exactDim == 0 {
		*exactDim = DefaultExactDim
	}
	if *oversample == 0 {
		*oversample = DefaultOversample
	}
	if *powerIters == 0 {
		*powerIters = DefaultPowerIters
	}
}

// SolverDefaults sets a dense model's zero solver to DefaultSolver and a
// worker count below one to one.
func SolverDefaults(solver *string, workers *int) {
	if *solver == "" {
		*solver = DefaultSolver
	}
	if *workers <= 0 {
		*workers = 1
	}
}
