package solver

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// stopBlock is how many random starts RTPMStop runs together per Apply; small
// so that an early success wastes little work.
const stopBlock = 8

// RTPMStop is the power method with a stopping condition ([004] App. C
// Alg. 2, docs/MATH.md §4.3): instead of a fixed number of restarts, random starts
// (run stopBlock at a time) are drawn until one θ_N satisfies
//
//	|T̃(θ,θ,θ)| ≥ max{ ‖T̃‖_F / (2√m), ‖T̃(I,I,θ)‖_F / 1.05 }
//
// where T̃ is the current deflated tensor and m = r − (components found).
// Slices come from the tensor's Slicer or the Apply fallback, and ‖T̃‖_F from
// ‖T‖_F (Normer, or 2k² contractions once for implicit tensors) and the
// deflation identity of docs/MATH.md §3.7, so implicit tensors work.
//
// opt.Restarts caps the starts per component (default 100·k). If the cap is
// reached, the start with the largest T(θ,θ,θ) is kept and Result.Fallbacks
// counts it; noisy tensors can make the 1.05 test unreachable, so this is a
// documented fallback rather than an error (Reason says how many). Other
// options as in RTPM.
func RTPMStop(ctx context.Context, t Tensor, r int, opt Options) (*Result, error) {
	k := t.Dim()
	if err := whitenedRank("rtpm-stop", r, k); err != nil {
		return nil, err
	}
	maxStarts := opt.Restarts
	if maxStarts <= 0 {
		maxStarts = 100 * k
	}
	n, tol := opt.limits(defaultPowerIters, defaultTol)
	rng := newRNG(opt.Seed)
	res := &Result{Converged: true}
	found := mat.NewDense(k, r, nil)
	var lambdas []float64
	theta := mat.NewDense(k, stopBlock, nil)
	vals := make([]float64, stopBlock)
	slice := mat.NewSymDense(k, nil)
	w := make([]float64, k)
	base, err := FrobeniusSq(ctx, t)
	if err != nil {
		return nil, err
	}
	for c := 0; c < r; c++ {
		var v *mat.Dense
		fro2 := base
		if c > 0 {
			v = found.Slice(0, k, 0, c).(*mat.Dense)
			rt, err := residualTerms(ctx, t, lambdas, v)
			if err != nil {
				return nil, err
			}
			fro2 += rt
		}
		defl := Deflate(t, lambdas, v)
		floor := math.Sqrt(math.Max(fro2, 0)) / (2 * math.Sqrt(float64(r-c)))
		best := mat.NewDense(k, 1, nil)
		bestVal := math.Inf(-1)
		accepted := false
		for used := 0; used < maxStarts && !accepted; used += stopBlock {
			randomUnit(theta, rng)
			res.Restarts += stopBlock
			it, _, err := powerPhase(ctx, defl, theta, n, tol)
			res.Iters += it
			if err != nil {
				return nil, err
			}
			if err := Cubic(ctx, defl, vals, theta); err != nil {
				return nil, err
			}
			for j, val := range vals {
				if val > bestVal {
					bestVal = val
					best.Copy(theta.Slice(0, k, j, j+1))
				}
				if math.Abs(val) < floor {
					continue
				}
				mat.Col(w, j, theta)
				if err := defl.Slice(ctx, slice, w); err != nil {
					return nil, err
				}
				if math.Abs(val) >= math.Sqrt(symFrobSq(slice))/1.05 {
					best.Copy(theta.Slice(0, k, j, j+1))
					accepted = true
					break
				}
			}
		}
		if !accepted {
			res.Fallbacks++
			res.Reason = fmt.Sprintf("rtpm-stop: the stopping condition never held for %d of the components within %d starts each; kept the best start instead", res.Fallbacks, maxStarts)
		}
		lam, eres, it, ok, err := polish(ctx, defl, best, n, tol)
		res.Iters += it
		res.notePolish(ok, "rtpm-stop", c, n, tol)
		if err != nil {
			return nil, err
		}
		if !(lam > zeroEig*firstOr(lambdas, lam)) || math.IsInf(lam, 0) {
			res.finish(ctx, t, lambdas, v)
			return res, fmt.Errorf("rtpm-stop: %w: component %d of %d has eigenvalue %.3g; lower the rank", ErrNonPositive, c+1, r, lam)
		}
		res.EigResidual = math.Max(res.EigResidual, eres)
		lambdas = append(lambdas, lam)
		found.Slice(0, k, c, c+1).(*mat.Dense).Copy(best)
	}
	res.finish(ctx, t, lambdas, found)
	return res, nil
}
