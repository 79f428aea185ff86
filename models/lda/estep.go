package lda

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/floats"
)

// TopicParams are fixed topic-model parameters for the per-document E-step:
// the topics word-major (Beta[w*K+j] = p(word w | topic j), every entry
// positive) and, for LDA, the Dirichlet parameters Alpha of the topic
// mixture; for the single-topic model (Single), Alpha holds the topic
// weights (positive, summing to 1).
type TopicParams struct {
	K, D   int
	Alpha  []float64
	Beta   []float64
	Single bool
	// Tol stops a document's fixed-point iteration when an iteration moves
	// less than this fraction of the document's tokens between topics
	// (Σ_j |Δγ_j| < Tol·L; 0: DefaultInferTol); MaxIter caps the
	// iterations (0: DefaultEStepMaxIter). Unused when Single (the posterior
	// over one topic is exact).
	Tol     float64
	MaxIter int
	// Prune drops a topic from a document's iteration once its expected
	// count is below Prune times the document's tokens (0: DefaultInferPrune;
	// negative: never).
	Prune float64
	// Overrelax stretches each iteration's step after the first, γ ←
	// γ + Overrelax·(F(γ) − γ) with F the fixed-point map, γ_j kept at or
	// above α_j (0 or 1: the plain iteration). Its fixed points are F's
	// (a document whose bound has several local optima may end at another
	// one); Tol reads the plain step's change. Unused when Single.
	Overrelax float64
}

// The E-step's defaults, taken for TopicParams' zero Tol, MaxIter and
// Prune, which inference and held-out scoring keep (the EM passes set
// their own, EM.EStepTol and EStepPrune): a document's iteration stops once
// a step moves less than 1% of its tokens or after 100 steps (a cap
// ordinary documents do not reach at that tolerance), and a topic below a
// thousandth of its tokens leaves it.
const (
	DefaultInferTol     = 1e-2
	DefaultEStepMaxIter = 100
	DefaultInferPrune   = 1e-3
)

// Check validates p's shapes and entries.
func (p *TopicParams) Check() error {
	if p.K < 1 || p.D < 1 || len(p.Alpha) != p.K || len(p.Beta) != p.K*p.D {
		return fmt.Errorf("lda: topic parameters k=%d, d=%d with %d weights and %d topic entries", p.K, p.D, len(p.Alpha), len(p.Beta))
	}
	for j, a := range p.Alpha {
		if !(a > 0) || math.IsInf(a, 0) {
			return fmt.Errorf("lda: topic %d has weight %g; the E-step needs positive finite ones", j, a)
		}
	}
	for i, b := range p.Beta {
		if !(b > 0) || math.IsInf(b, 0) {
			return fmt.Errorf("lda: word %d of topic %d has probability %g; the E-step needs smoothed (positive) topics", i/p.K, i%p.K, b)
		}
	}
	return nil
}

// EStep runs the per-document E-step for fixed parameters. It holds one
// worker's buffers (grown to the longest document seen, then reused: no
// allocation per document), so each goroutine needs its own.
//
// For LDA it is the variational E-step of Blei, Ng and Jordan (2003): with
// q(θ) = Dirichlet(γ) and q(z_n = j) = φ_nj, the fixed point
//
//	φ_wj ∝ β_wj · exp(ψ(γ_j))        (for each distinct word w of the document)
//	γ_j  = α_j + Σ_w c_w φ_wj
//
// is iterated from γ = α + L/k (L the document's tokens) until an iteration
// moves less than a fraction Tol of the tokens. The evidence lower bound of the document is
//
//	ELBO = Σ_w c_w log Σ_j β_wj e^{E log θ_j} + Σ_j (α_j − γ_j) E log θ_j
//	       + Σ_j log Γ(γ_j) − log Γ(Σγ) + log Γ(α₀) − Σ_j log Γ(α_j),
//
// E log θ_j = ψ(γ_j) − ψ(Σγ), with φ optimal for the final γ. For the
// single-topic model the posterior over the one topic is exact,
// r_j ∝ w_j Π_w β_wj^{c_w}, and the "bound" is the log-likelihood
// log Σ_j w_j Π_w β_wj^{c_w}.
type EStep struct {
	p     *TopicParams
	tol   float64
	iters int
	relax float64   // Overrelax, 1 when plain
	lg0   float64   // log Γ(α₀) (LDA)
	psiA  []float64 // ψ(α_j) (LDA): E log θ_j + ψ(Σγ) of a dropped topic
	lgamA []float64 // log Γ(α_j) (LDA)
	logW  []float64
	prune float64
	// first[l] holds, once met, the first iteration's e^{ψ(γ_j) − m} for a
	// document of l tokens (γ_j = α_j + l/k depends on nothing else), for l
	// below len(first): short documents then start without k digammas and
	// exponentials each.
	first [][]float64
	// per document
	terms []int32   // its distinct words (the caller's slice)
	rows  []float64 // their rows of Beta over the active topics, n×ka (fixedPoint)
	q     []float64 // per word: e·row, then c_w/(e·row)
	act   []int     // the active topics
	all   []int     // 0, …, k−1 (PhiSparse of Single)
	keep  []int     // positions in act of the topics an iteration keeps
	c     []float64 // the counts as floats
	gamma []float64
	e     []float64 // exp(ψ(γ_j) − max ψ) over the active topics
	s     []float64
	elog  []float64 // E log θ_j (LDA) or r_j (single)
	phi   []float64 // c_w φ_wj after Expect: n×ka over the active topics (LDA), n×k (Single)
	ka    int       // the active topics after fixedPoint: e.act[:ka]
	phiW  []float64 // one word's φ over all k topics (Phi)
	// Iters is the number of fixed-point iterations of the last document.
	Iters int
	// startTop and startCnt, when set (Start), are the next document's
	// start: the topics and expected counts an earlier E-step of it ended
	// with.
	startTop []int32
	startCnt []float32
}

// warmMix is the share of a document's tokens a warm start (Start) still
// spreads over every topic, as the cold start spreads them all: every
// topic stays in the first iteration, which may bring back one the
// document's earlier E-step dropped.
const warmMix = 0.2

// Start sets the next document's starting point for Expect or Infer: the
// topics and expected counts γ_j − α_j an earlier E-step of the same
// document ended with (Top), under parameters since moved by an M-step.
// The iteration then starts from γ_j = α_j + warmMix·L/k + (1−warmMix)·L·n_j/Σn
// (L the document's tokens) instead of α_j + L/k: nearer its fixed point,
// so it takes fewer iterations. An empty start is the cold one.
func (e *EStep) Start(topics []int32, counts []float32) {
	e.startTop, e.startCnt = topics, counts
}

// Top writes the last document's largest expected counts γ_j − α_j (LDA),
// at most len(topics) of them, largest first (ties: the lower topic), and
// returns how many it wrote: the start (Start) of the document's next
// E-step. Single writes none.
func (e *EStep) Top(topics []int32, counts []float32) int {
	if e.p.Single {
		return 0
	}
	n := 0
	for _, j := range e.act[:e.ka] {
		c := float32(e.gamma[j] - e.p.Alpha[j])
		if !(c > 0) {
			continue
		}
		// Insertion into the sorted prefix: n is at most a handful.
		p := n
		if p == len(topics) {
			if p == 0 || c < counts[p-1] || c == counts[p-1] && int32(j) > topics[p-1] {
				continue
			}
			p--
		} else {
			n++
		}
		for ; p > 0 && (counts[p-1] < c || counts[p-1] == c && topics[p-1] > int32(j)); p-- {
			topics[p], counts[p] = topics[p-1], counts[p-1]
		}
		topics[p], counts[p] = int32(j), c
	}
	return n
}

// NewEStep returns an E-step for p (which it reads, never writes; p must
// pass Check).
func NewEStep(p *TopicParams) *EStep {
	e := &EStep{p: p, tol: p.Tol, iters: p.MaxIter, relax: 1}
	if p.Overrelax > 0 {
		e.relax = p.Overrelax
	}
	if e.tol <= 0 {
		e.tol = DefaultInferTol
	}
	if e.iters <= 0 {
		e.iters = DefaultEStepMaxIter
	}
	k := p.K
	e.gamma, e.e, e.s, e.elog = make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k)
	e.act, e.keep, e.all = make([]int, k), make([]int, k), make([]int, k)
	for j := range e.all {
		e.all[j] = j
	}
	switch {
	case p.Prune == 0:
		e.prune = DefaultInferPrune
	case p.Prune > 0:
		e.prune = p.Prune
	}
	// At least one topic keeps l/k ≥ prune·l of the tokens.
	e.prune = min(e.prune, 0.5/float64(k))
	if !p.Single {
		// Up to 2^16 values a worker.
		e.first = make([][]float64, min(firstLengths, 1<<16/k))
	}
	if p.Single {
		e.logW = make([]float64, k)
		for j, a := range p.Alpha {
			e.logW[j] = math.Log(a)
		}
	} else {
		a0 := 0.0
		e.psiA, e.lgamA = make([]float64, k), make([]float64, k)
		for j, a := range p.Alpha {
			a0 += a
			e.lgamA[j] = lgamma(a)
			e.psiA[j] = digamma(a)
		}
		e.lg0 = lgamma(a0)
	}
	return e
}

// load records the document's words and its counts as floats; it returns
// the number of tokens. The words' rows of Beta are read in place: the
// first iteration of fixedPoint, where every topic is still active, reads
// them through terms, and only the active topics' columns are copied.
func (e *EStep) load(terms, counts []int32) float64 {
	n := len(terms)
	e.terms = terms
	e.c = grow(e.c, n)
	e.q = grow(e.q, n)
	l := 0.0
	for i, c := range counts[:n] {
		e.c[i] = float64(c)
		l += e.c[i]
	}
	return l
}

// wordNorms sets e.q[i] = x·rᵢ for the rows rᵢ (n×len(x), row-major) and
// returns Σ_i c_i log(x·rᵢ) when withLog, then replaces each e.q[i] by
// c_i/(x·rᵢ): the per-word weights of the fixed point and of φ.
func (e *EStep) wordNorms(rows, x []float64, withLog bool) float64 {
	n, ka := len(e.c), len(x)
	q := e.q[:n]
	blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: n, Cols: ka, Stride: ka, Data: rows[:n*ka]},
		blas64.Vector{N: ka, Inc: 1, Data: x}, 0, blas64.Vector{N: n, Inc: 1, Data: q})
	sum := 0.0
	if withLog {
		// Σ c log q as the logarithm of a product (one logarithm per
		// document instead of one per word), its binary exponent taken out
		// before it could underflow or overflow: the product stays within
		// 2^±500 before a factor, and a factor (q or q², q within 2^±200)
		// within 2^±400.
		prod, exp2 := 1.0, 0
		for i, c := range e.c[:n] {
			switch v := q[i]; {
			case v < 0x1p-200 || v > 0x1p200 || c > 2:
				sum += c * math.Log(v)
			case c == 1:
				prod *= v
			default:
				prod *= v * v
			}
			if prod < 0x1p-500 || prod > 0x1p500 {
				f, x := math.Frexp(prod)
				prod, exp2 = f, exp2+x
			}
		}
		sum += math.Log(prod) + float64(exp2)*math.Ln2
	}
	for i, c := range e.c[:n] {
		q[i] = c / q[i]
	}
	return sum
}

// Infer returns the posterior of the document's topic shares: the
// variational Dirichlet parameters γ (LDA; γ/Σγ is the posterior mean of
// θ) or the posterior probabilities of the one topic (Single). The slice
// is e's and is overwritten by the next call.
func (e *EStep) Infer(terms, counts []int32) []float64 {
	l := e.load(terms, counts)
	if e.p.Single {
		e.single()
		return e.elog
	}
	e.fixedPoint(l)
	return e.gamma
}

// Expect runs the E-step on the document and returns its bound (ELBO for
// LDA, log-likelihood for Single). Afterwards PhiSparse gives the expected
// counts c_w φ_wj of its words and Suff its contribution to the weights'
// sufficient statistics: E log θ_j (LDA) or r_j (Single).
//
// For LDA, φ and the bound are those of the final γ with φ over the topics
// the iteration kept (a dropped topic has γ_j = α_j and φ_wj = 0): the
// ELBO of that (γ, φ), a lower bound on the likelihood like any other;
// the terms of the dropped topics are their prior's, known in advance.
func (e *EStep) Expect(terms, counts []int32) float64 {
	l := e.load(terms, counts)
	k, n := e.p.K, len(terms)
	if e.p.Single {
		e.phi = grow(e.phi, n*k)
		ll := e.single()
		for i, c := range e.c[:n] {
			row := e.phi[i*k : (i+1)*k]
			copy(row, e.elog)
			blasImpl.Dscal(k, c, row, 1)
		}
		return ll
	}
	e.fixedPoint(l)
	gs := floats.Sum(e.gamma)
	psiSum := digamma(gs)
	for j, v := range e.psiA {
		e.elog[j] = v - psiSum
	}
	act, ka := e.act[:e.ka], e.ka
	ee := e.e[:ka]
	gmax := 0.0
	for _, j := range act {
		gmax = max(gmax, e.gamma[j])
	}
	mx := digamma(gmax)
	// log Γ(α₀) − Σ_j log Γ(α_j) + Σ_j log Γ(γ_j), whose terms cancel for
	// the dropped topics (γ_j = α_j).
	bound := e.lg0 - lgamma(gs) + l*(mx-psiSum)
	for q, j := range act {
		g := e.gamma[j]
		y, r := digammaParts(g)
		ee[q] = y * math.Exp(r-mx)
		el := r + math.Log(y) - psiSum
		e.elog[j] = el
		bound += (e.p.Alpha[j]-g)*el + lgamma(g) - e.lgamA[j]
	}
	bound += e.wordNorms(e.rows, ee, true)
	e.phi = grow(e.phi, n*ka)
	for i, r := range e.q[:n] {
		row, out := e.rows[i*ka:(i+1)*ka], e.phi[i*ka:(i+1)*ka]
		for q, v := range ee {
			out[q] = r * v * row[q]
		}
	}
	return bound
}

// PhiSparse returns the expected counts c_w φ_wj of word i (the i-th
// distinct word of the last document given to Expect) as the topics j
// they may be non-zero for and the counts in that order; every other
// topic's is zero. Both slices are e's, valid until the next call.
func (e *EStep) PhiSparse(i int) (topics []int, phi []float64) {
	if e.p.Single {
		k := e.p.K
		return e.all, e.phi[i*k : (i+1)*k]
	}
	ka := e.ka
	return e.act[:ka], e.phi[i*ka : (i+1)*ka]
}

// Phi returns row i of the expected counts c_w φ_wj of the last document
// given to Expect, over all k topics, in a buffer of e's that the next
// call overwrites.
func (e *EStep) Phi(i int) []float64 {
	e.phiW = grow(e.phiW, e.p.K)
	clear(e.phiW)
	topics, phi := e.PhiSparse(i)
	for p, j := range topics {
		e.phiW[j] = phi[p]
	}
	return e.phiW
}

// Suff returns the last document's contribution to the weights' sufficient
// statistics (see Expect).
func (e *EStep) Suff() []float64 { return e.elog }

// fixedPoint iterates γ for the loaded document of l tokens, until the
// iteration moves less than a fraction tol of the document's tokens
// between topics (Σ_j |Δγ_j| < tol·l, the plain step's change) or after
// the iteration cap. A topic whose expected count falls below prune·l
// leaves the iteration (its γ_j is α_j from then on, its φ zero): a
// document uses few of many topics, and the iterations then cost in the
// topics it uses. The first iteration reads the words' rows of Beta in
// place (a dot product and an axpy per word); after it the active topics'
// columns are copied into e.rows (n×ka), which each later drop compacts in
// place, and the iterations are two matrix-vector products over them.
func (e *EStep) fixedPoint(l float64) {
	k, n := e.p.K, len(e.c)
	warm := e.warmStart(l)
	if !warm {
		for j, a := range e.p.Alpha {
			e.gamma[j] = a + l/float64(k)
		}
	}
	e.Iters = 0
	act := e.act[:k]
	for j := range act {
		act[j] = j
	}
	ka, direct := k, true
	floor := e.prune * l
	for e.Iters < e.iters {
		e.Iters++
		// ee = e^{ψ(γ_j) − m} for m = ψ(max γ_j) (ψ increases): one
		// logarithm per iteration, one exponential per active topic.
		ee, s := e.e[:ka], e.s[:ka]
		if li := int(l); e.Iters == 1 && !warm && li < len(e.first) && float64(li) == l {
			if e.first[li] == nil {
				e.first[li] = make([]float64, k)
				e.expPsi(act, e.first[li])
			}
			ee = e.first[li]
		} else {
			e.expPsi(act, ee)
		}
		// s = Rᵀ(c / R·ee) for the rows R (n×ka).
		clear(s)
		if direct {
			e.directSums(ee, s)
		} else {
			e.wordNorms(e.rows, ee, false)
			blas64.Gemv(blas.Trans, 1, blas64.General{Rows: n, Cols: ka, Stride: ka, Data: e.rows[:n*ka]},
				blas64.Vector{N: n, Inc: 1, Data: e.q[:n]}, 0, blas64.Vector{N: ka, Inc: 1, Data: s})
		}
		change, drop := 0.0, false
		stretch := e.relax != 1 && e.Iters > 1
		for q, j := range act {
			cnt := ee[q] * s[q]
			g := e.p.Alpha[j] + cnt
			step := g - e.gamma[j]
			change += math.Abs(step)
			if stretch {
				g = max(e.p.Alpha[j], e.gamma[j]+e.relax*step)
			}
			e.gamma[j] = g
			drop = drop || cnt < floor
		}
		if change < e.tol*l {
			break
		}
		if drop || direct {
			keep := e.all[:ka]
			if drop {
				keep = e.dropTopics(act, floor)
			}
			e.compact(act, ka, keep, direct)
			direct = false
			for q, p := range keep {
				act[q] = act[p]
			}
			act, ka = act[:len(keep)], len(keep)
		}
	}
	if direct {
		// Converged in the first iteration: Expect reads the rows.
		e.compact(act, ka, e.all[:ka], true)
	}
	e.ka = ka
}

// warmStart sets γ from the start Start gave, if any, for a document of
// l tokens, and reports whether it did; it consumes the start.
func (e *EStep) warmStart(l float64) bool {
	top, cnt := e.startTop, e.startCnt
	e.startTop, e.startCnt = nil, nil
	sum := 0.0
	for _, c := range cnt {
		sum += float64(c)
	}
	if len(top) == 0 || !(sum > 0) {
		return false
	}
	base := warmMix * l / float64(e.p.K)
	for j, a := range e.p.Alpha {
		e.gamma[j] = a + base
	}
	f := (1 - warmMix) * l / sum
	for q, j := range top {
		e.gamma[j] += f * float64(cnt[q])
	}
	return true
}

// expPsi sets ee[q] = e^{ψ(γ_j) − m} for the topics j = act[q], with
// m = ψ(max γ_j) (ψ increases): one logarithm, and one exponential per
// topic.
func (e *EStep) expPsi(act []int, ee []float64) {
	gmax := 0.0
	for _, j := range act {
		gmax = max(gmax, e.gamma[j])
	}
	mx := digamma(gmax)
	for q, j := range act {
		y, r := digammaParts(e.gamma[j])
		ee[q] = y * math.Exp(r-mx)
	}
}

// firstLengths bounds the document lengths whose first iteration EStep
// keeps (EStep.first).
const firstLengths = 512

// directSums sets s = Σ_i q_i·β_i and e.q[i] = q_i = c_i/(β_i·ee) for the
// rows β_i of Beta of the document's words over all k topics, read in place.
func (e *EStep) directSums(ee, s []float64) {
	k := e.p.K
	for i, t := range e.terms {
		row := e.p.Beta[int(t)*k : int(t+1)*k]
		q := e.c[i] / blasImpl.Ddot(k, row, 1, ee, 1)
		e.q[i] = q
		blasImpl.Daxpy(k, q, row, 1, s, 1)
	}
}

// compact copies the columns keep (positions in act) of the document's
// rows into e.rows: from Beta when direct (act holding all k topics), else
// within e.rows (n×ka), where row i moves to i·len(keep) ≤ i·ka, left of
// every entry not yet read.
func (e *EStep) compact(act []int, ka int, keep []int, direct bool) {
	n, nk := len(e.terms), len(keep)
	if direct {
		k := e.p.K
		e.rows = grow(e.rows, n*nk)
		for i, t := range e.terms {
			src, dst := e.p.Beta[int(t)*k:int(t+1)*k], e.rows[i*nk:(i+1)*nk]
			if nk == k {
				copy(dst, src)
				continue
			}
			for q, p := range keep {
				dst[q] = src[act[p]]
			}
		}
		return
	}
	for i := range n {
		src, dst := e.rows[i*ka:i*ka+ka], e.rows[i*nk:(i+1)*nk]
		for q, p := range keep {
			dst[q] = src[p]
		}
	}
}

// dropTopics returns the positions in act of the topics whose expected
// count γ_j − α_j is at least floor, setting the others' γ_j to α_j.
func (e *EStep) dropTopics(act []int, floor float64) []int {
	keep := e.keep[:0]
	for q, j := range act {
		if e.gamma[j]-e.p.Alpha[j] >= floor {
			keep = append(keep, q)
		} else {
			e.gamma[j] = e.p.Alpha[j]
		}
	}
	return keep
}

// single sets e.elog to the posterior over the one topic of the loaded
// document and returns its log-likelihood.
func (e *EStep) single() float64 {
	k := e.p.K
	copy(e.elog, e.logW)
	for i, t := range e.terms {
		for j, b := range e.p.Beta[int(t)*k : int(t+1)*k] {
			e.elog[j] += e.c[i] * math.Log(b)
		}
	}
	mx := floats.Max(e.elog)
	s := 0.0
	for j, v := range e.elog {
		x := math.Exp(v - mx)
		e.elog[j] = x
		s += x
	}
	floats.Scale(1/s, e.elog)
	return mx + math.Log(s)
}

func lgamma(x float64) float64 { v, _ := math.Lgamma(x); return v }

// digamma is ψ(x) for x > 0: the recurrence ψ(x) = ψ(x+1) − 1/x up to
// x ≥ 6, then the asymptotic series to x⁻¹² (absolute error below 2e-12).
func digamma(x float64) float64 {
	y, r := digammaParts(x)
	return r + math.Log(y)
}

// digammaParts returns y ≥ 6 and r with ψ(x) = log y + r (digamma without
// its logarithm), so that e^{ψ(x) − m} = y·e^{r − m} costs one exponential.
// Below 6 the recurrence ψ(x) = ψ(x+m) − Σ_{i<m} 1/(x+i) sums its m terms
// as P'/P for P = Π_{i<m} (x+i): one division instead of m, which
// dominated the E-step's per-topic work for the small γ_j of unused topics.
func digammaParts(x float64) (y, r float64) {
	if x < 6 {
		p, dp := 1.0, 0.0
		for x < 6 {
			dp = dp*x + p
			p *= x
			x++
		}
		r = -dp / p
	}
	inv := 1 / x
	f := inv * inv
	t := f * (-1.0/12 + f*(1.0/120+f*(-1.0/252+f*(1.0/240+f*(-1.0/132+f*(691.0/32760))))))
	return x, r - 0.5*inv + t
}

// blasImpl is gonum's pure-Go BLAS, called directly for the E-step's short
// vectors (the dot products and updates of a document's words).
var blasImpl gonum.Implementation

// grow returns s resized to n, reallocated when too small.
func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
