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

// AsymFunc is the signature of the registered solvers for general
// (asymmetric) third-order tensors.
type AsymFunc func(ctx context.Context, t Asym, r int, opt Options) (*CP, error)

type entry struct {
	fn  Func
	doc string
}

type asymEntry struct {
	fn  AsymFunc
	doc string
}

// Domains, in the words the descriptions use:
//   - whitened: an orthogonally decomposable tensor Σλ_i v_i⊗3 with
//     orthonormal v_i (after whitening with M2), so r ≤ dim; this is what
//     the lda/topic/gmm/ica/markov/hmm/multiview models hand over;
//   - raw: a non-orthogonal tensor Σπ_i u_i⊗3 with linearly independent unit
//     u_i (no whitening, so no whitening error), r ≤ dim;
//   - overcomplete: incoherent unit factors with r possibly > dim.
//
// Whitened tensors are a special case of raw ones, so every solver accepts
// them; rtpm, rtpm-stop, simultaneous, ojd and ojd0 need them (they assume
// orthogonal factors).
var registry = map[string]entry{
	"rtpm": {RTPM, "robust tensor power method, fixed restarts ([004] Alg. 1); whitened, r ≤ dim; the default of every model"},
	"rtpm-stop": {RTPMStop, "power method with stopping condition ([004] Alg. 2); whitened, r ≤ dim; " +
		"fewer starts than rtpm at equal accuracy"},
	"simultaneous": {Simultaneous, "orthogonalised simultaneous power iteration: one contraction per iteration for all " +
		"components and restarts (about Iters passes over a streamed tensor); whitened, r ≤ dim"},
	"ojd": {jd(JDOptions{Method: Orthogonal, TwoStage: true}),
		"orthogonal joint diagonalisation, random + plug-in projections (OJD1, [003] Alg. 1); whitened, r ≤ dim; " +
			"most accurate at full rank"},
	"ojd0": {jd(JDOptions{Method: Orthogonal}), "orthogonal joint diagonalisation, random projections only (OJD0); whitened, r ≤ dim"},
	"nojd": {jd(JDOptions{Method: NonOrthogonal, TwoStage: true}),
		"non-orthogonal joint diagonalisation (QRJ1D), random + plug-in projections (NOJD1); raw, r ≤ dim"},
	"nojd0": {jd(JDOptions{Method: NonOrthogonal}), "non-orthogonal joint diagonalisation, random projections only (NOJD0); raw, r ≤ dim"},
	"als": {ALSSym, "CP-ALS from a random slice's eigenvectors, symmetrised; whitened or raw, any r; " +
		"also the refinement step (Options.Refine)"},
	"als-random": {ALSRandom, "CP-ALS from random factors (the papers' baseline); whitened or raw, any r; kept for comparison"},
	"alt": {altSym, "alternating rank-1 power updates, Proc. 2 clustering, Alg. 4 bias removal ([002]); " +
		"raw or overcomplete (r may exceed dim)"},
}

var asymRegistry = map[string]asymEntry{
	"ojd":   {asymJD(Orthogonal, true), "asymmetric joint diagonalisation ([003] §6), Jacobi, plug-in stage; A, B orthonormal, r ≤ min(d1, d2)"},
	"ojd0":  {asymJD(Orthogonal, false), "asymmetric joint diagonalisation, Jacobi, random projections only"},
	"nojd":  {asymJD(NonOrthogonal, true), "asymmetric joint diagonalisation, QRJ1D, plug-in stage; general factors, r ≤ min(d1, d2)"},
	"nojd0": {asymJD(NonOrthogonal, false), "asymmetric joint diagonalisation, QRJ1D, random projections only"},
	"als": {func(ctx context.Context, t Asym, r int, o Options) (*CP, error) { return CPALS(ctx, t, r, nil, o) },
		"CP-ALS from random factors; any r"},
	"alt": {func(ctx context.Context, t Asym, r int, o Options) (*CP, error) {
		return Alt(ctx, t, r, o, DefaultAltOptions())
	},
		"alternating rank-1 power updates with Proc. 2 and Alg. 4 ([002]); r may exceed every dimension"},
}

func jd(jo JDOptions) Func {
	return func(ctx context.Context, t Tensor, r int, o Options) (*Result, error) {
		return JointDiagWith(ctx, t, r, o, jo)
	}
}

func asymJD(m JDMethod, twoStage bool) AsymFunc {
	return func(ctx context.Context, t Asym, r int, o Options) (*CP, error) {
		return JointDiagAsym(ctx, t, r, o, m, twoStage)
	}
}

// altSym is Alt on a symmetric tensor through polarisation with
// DefaultAltOptions, symmetrised. A shortfall of components returns the
// components found together with the error.
func altSym(ctx context.Context, t Tensor, r int, o Options) (*Result, error) {
	cp, err := Alt(ctx, SymAsym(t), r, o, DefaultAltOptions())
	if cp == nil {
		return nil, err
	}
	res, serr := Symmetrize(ctx, t, cp)
	if serr != nil {
		return nil, serr
	}
	return res, err
}

// Names lists the registered symmetric solver names, sorted.
func Names() []string { return sortedKeys(registry) }

// AsymNames lists the registered asymmetric solver names, sorted.
func AsymNames() []string { return sortedKeys(asymRegistry) }

func sortedKeys[V any](m map[string]V) []string {
	n := make([]string, 0, len(m))
	for k := range m {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Describe returns a one-line description of a registered symmetric solver:
// what it is and its domain (whitened, raw, overcomplete).
func Describe(name string) string { return registry[name].doc }

// DescribeAsym returns a one-line description of a registered asymmetric solver.
func DescribeAsym(name string) string { return asymRegistry[name].doc }

// ByName returns the named symmetric solver, wrapped so opt.Refine > 0 adds
// CP-ALS refinement. Unknown names give an error wrapping ErrUnknownSolver
// that lists the valid ones.
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

// AsymByName returns the named asymmetric solver, wrapped so opt.Refine > 0
// adds that many CP-ALS sweeps from its answer.
func AsymByName(name string) (AsymFunc, error) {
	e, ok := asymRegistry[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (known asymmetric solvers: %s)", ErrUnknownSolver, name, strings.Join(AsymNames(), ", "))
	}
	return func(ctx context.Context, t Asym, r int, opt Options) (*CP, error) {
		cp, err := e.fn(ctx, t, r, opt)
		if err != nil || opt.Refine <= 0 {
			return cp, err
		}
		o := opt
		o.Iters = opt.Refine
		ref, err := CPALS(ctx, t, len(cp.W), cp, o)
		if err != nil {
			return nil, err
		}
		ref.Iters += cp.Iters
		ref.Starts = cp.Starts
		return ref, nil
	}, nil
}
