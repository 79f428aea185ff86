package solver

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Func is the common signature of every registered symmetric solver: find r
// components of t. Every Func honours opt.Refine (CP-ALS sweeps afterwards).
type Func func(ctx context.Context, t Tensor, r int, opt Options) (*Result, error)

type entry struct {
	fn  Func
	doc string
}

var registry = map[string]entry{
	"rtpm":      {RTPM, "robust tensor power method, fixed restarts ([004] Alg. 1); whitened tensors, r ≤ dim"},
	"rtpm-stop": {RTPMStop, "power method with stopping condition ([004] Alg. 2); whitened tensors, r ≤ dim"},
	"ojd": {func(ctx context.Context, t Tensor, r int, o Options) (*Result, error) {
		return JointDiag(ctx, t, r, o, Orthogonal, true)
	}, "orthogonal joint diagonalisation, random + plug-in projections (OJD1, [003] Alg. 1); r ≤ dim"},
	"ojd0": {func(ctx context.Context, t Tensor, r int, o Options) (*Result, error) {
		return JointDiag(ctx, t, r, o, Orthogonal, false)
	}, "orthogonal joint diagonalisation, random projections only (OJD0)"},
	"nojd": {func(ctx context.Context, t Tensor, r int, o Options) (*Result, error) {
		return JointDiag(ctx, t, r, o, NonOrthogonal, true)
	}, "non-orthogonal joint diagonalisation, QRJ1D, two stages (NOJD1); unwhitened tensors, r ≤ dim"},
	"nojd0": {func(ctx context.Context, t Tensor, r int, o Options) (*Result, error) {
		return JointDiag(ctx, t, r, o, NonOrthogonal, false)
	}, "non-orthogonal joint diagonalisation, random projections only (NOJD0)"},
	"als": {ALSSym, "CP-ALS (asymmetric updates through polarisation, symmetrised); any r"},
	"alt": {func(ctx context.Context, t Tensor, r int, o Options) (*Result, error) {
		cp, err := Alt(ctx, SymAsym(t), r, o, AltOptions{})
		if cp == nil {
			return nil, err
		}
		res, serr := Symmetrize(ctx, t, cp)
		if serr != nil {
			return nil, serr
		}
		return res, err
	}, "alternating rank-1 power updates with clustering ([002] Alg. 1, Proc. 2); non-orthogonal, r may exceed dim"},
}

// Names lists the registered solver names, sorted.
func Names() []string {
	n := make([]string, 0, len(registry))
	for k := range registry {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Describe returns a one-line description of a registered solver.
func Describe(name string) string { return registry[name].doc }

// ByName returns the named solver, wrapped so opt.Refine > 0 adds CP-ALS
// refinement. Unknown names give an error wrapping ErrUnknownSolver that
// lists the valid ones.
func ByName(name string) (Func, error) {
	e, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownSolver, name, strings.Join(Names(), ", "))
	}
	return func(ctx context.Context, t Tensor, r int, opt Options) (*Result, error) {
		res, err := e.fn(ctx, t, r, opt)
		if err != nil || opt.Refine <= 0 {
			return res, err
		}
		return Refine(ctx, t, res, opt.Refine, opt)
	}, nil
}
