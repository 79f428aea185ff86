package lda

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"gonum.org/v1/gonum/mat"
)

// SubspaceAngle returns the largest principal angle, in radians, between the
// column spans of a and b (both d×k of full column rank): asin of the
// largest singular value of (I − QaQaᵀ)Qb, accurate for small angles.
func SubspaceAngle(a, b *mat.Dense) (float64, error) {
	qa, err := orthoBasis(a)
	if err != nil {
		return 0, err
	}
	qb, err := orthoBasis(b)
	if err != nil {
		return 0, err
	}
	var g, r mat.Dense
	g.Mul(qa.T(), qb)
	r.Mul(qa, &g)
	r.Sub(qb, &r)
	var svd mat.SVD
	if !svd.Factorize(&r, mat.SVDNone) {
		return 0, errors.New("lda: SVD for the subspace angle did not converge")
	}
	s := svd.Values(nil)
	if len(s) == 0 {
		return 0, nil
	}
	return math.Asin(min(1, s[0])), nil
}

// orthoBasis is an orthonormal basis of the columns of a, which must have
// full column rank.
func orthoBasis(a *mat.Dense) (*mat.Dense, error) {
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		return nil, errors.New("lda: SVD of a basis did not converge")
	}
	sv := svd.Values(nil)
	if len(sv) == 0 || sv[len(sv)-1] <= sv[0]*1e-13 {
		return nil, errors.New("lda: basis is rank deficient")
	}
	u := new(mat.Dense)
	svd.UTo(u)
	return u, nil
}

// BasisDrift returns the largest principal angle (radians) between the
// whitening W that merged phase-1 (or power) statistics give now and the W
// stored in phase-2 statistics: how far the top-k subspace of the second
// moment has moved since phase 2 was computed (see the incremental fits at
// Phase1Stats). p1 must be of the pass phase 2 was whitened after: phase-2
// statistics of a route with a power pass compare with power statistics.
func BasisDrift(ctx context.Context, p1, p2 *implicit.TopicStats, cfg Config) (float64, error) {
	if p2.Header.Phase != 2 || p2.WMatrix() == nil {
		return 0, fmt.Errorf("lda: basis drift needs phase-2 statistics, got phase %d", p2.Header.Phase)
	}
	if p1.Header.Phase == 1 && !p2.Header.Exact && p2.Passes != 1+p1.Header.Power {
		return 0, fmt.Errorf("lda: basis drift: the phase-2 statistics were whitened after %d passes (%d power passes), the basis statistics hold %d power passes; compare with the statistics of the same pass",
			p2.Passes, p2.Passes-1, p1.Header.Power)
	}
	if p1.Header.D != p2.Header.D || p1.Header.K != p2.Header.K {
		return 0, &statsfile.IncompatibleError{Field: "d×k", A: fmt.Sprintf("%d×%d", p1.Header.D, p1.Header.K), B: fmt.Sprintf("%d×%d", p2.Header.D, p2.Header.K)}
	}
	w, _, _, err := Whitening(ctx, p1, cfg)
	if err != nil {
		return 0, err
	}
	return SubspaceAngle(w, p2.WMatrix())
}
