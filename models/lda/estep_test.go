package lda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mathext"
)

func TestDigamma(t *testing.T) {
	// ψ(n) = −γ + H_{n−1} and ψ(n+½) = −γ − 2 ln 2 + Σ_{i≤n} 2/(2i−1).
	const euler = 0.57721566490153286061
	whole, half := -euler, -euler-2*math.Ln2
	for n := 1; n <= 60; n++ {
		if n > 1 {
			whole += 1 / float64(n-1)
		}
		if got := digamma(float64(n)); math.Abs(got-whole) > 2e-12 {
			t.Errorf("ψ(%d) = %.15g, want %.15g", n, got, whole)
		}
		if got := digamma(float64(n-1) + 0.5); math.Abs(got-half) > 2e-12 {
			t.Errorf("ψ(%g) = %.15g, want %.15g", float64(n-1)+0.5, got, half)
		}
		half += 2 / float64(2*n-1)
	}
	// Below 6 the reciprocals of the recurrence are summed as one quotient:
	// against the plain sum, term by term, over the small γ_j of unused
	// topics and the whole range it covers.
	for _, x := range []float64{1e-9, 1e-6, 2e-3, 0.02, 0.37, 1, 2.71, 5.5, 5.999999} {
		ref, z := 0.0, x
		for ; z < 6; z++ {
			ref -= 1 / z
		}
		ref += digamma(z)
		if got := digamma(x); math.Abs(got-ref) > 1e-14*max(1, math.Abs(ref)) {
			t.Errorf("ψ(%g) = %.17g, by the plain recurrence %.17g", x, got, ref)
		}
	}
	for _, x := range []float64{1e-4, 0.01, 0.3, 7.3, 1e4, 1e7} {
		if got, want := digamma(x), mathext.Digamma(x); math.Abs(got-want) > 1e-9*max(1, math.Abs(want)) {
			t.Errorf("ψ(%g) = %.15g, gonum %.15g", x, got, want)
		}
	}
}

// randomParams draws k topics over d words (word-major, positive) and
// positive Dirichlet parameters.
func randomParams(r *rand.Rand, k, d int, single bool) *TopicParams {
	p := &TopicParams{K: k, D: d, Alpha: make([]float64, k), Beta: make([]float64, k*d), Single: single}
	for j := range k {
		s := 0.0
		for w := range d {
			v := r.ExpFloat64() + 1e-3
			p.Beta[w*k+j] = v
			s += v
		}
		for w := range d {
			p.Beta[w*k+j] /= s
		}
		p.Alpha[j] = 0.05 + r.Float64()
	}
	if single {
		floats.Scale(1/floats.Sum(p.Alpha), p.Alpha)
	}
	return p
}

// naiveEStep is the textbook variational E-step over the document's
// individual tokens: φ_n ∝ β_{w_n} exp(ψ(γ)), γ = α + Σ_n φ_n, for iters
// iterations from γ = α + L/k, and the ELBO as the five expectations of
// Blei et al. (2003, A.3) written out term by term.
func naiveEStep(p *TopicParams, tokens []int, iters int) (gamma []float64, elbo float64) {
	k, l := p.K, len(tokens)
	gamma = make([]float64, k)
	for j := range gamma {
		gamma[j] = p.Alpha[j] + float64(l)/float64(k)
	}
	phi := make([][]float64, l)
	update := func() {
		for n, w := range tokens {
			phi[n] = make([]float64, k)
			s := 0.0
			for j := range k {
				phi[n][j] = p.Beta[w*k+j] * math.Exp(digamma(gamma[j]))
				s += phi[n][j]
			}
			for j := range k {
				phi[n][j] /= s
			}
		}
	}
	for range iters {
		update()
		for j := range k {
			gamma[j] = p.Alpha[j]
			for n := range tokens {
				gamma[j] += phi[n][j]
			}
		}
	}
	return gamma, textbookELBO(p, tokens, gamma, nil)
}

// textbookELBO is the ELBO of q(θ) = Dirichlet(γ) and, for every token,
// φ_n ∝ β_{w_n} exp(ψ(γ)) over the topics with active[j] (all when
// active is nil; zero elsewhere), as the five expectations of Blei et al.
// (2003, A.3) written out term by term.
func textbookELBO(p *TopicParams, tokens []int, gamma []float64, active []bool) (elbo float64) {
	k := p.K
	phi := make([][]float64, len(tokens))
	for n, w := range tokens {
		phi[n] = make([]float64, k)
		s := 0.0
		for j := range k {
			if active == nil || active[j] {
				phi[n][j] = p.Beta[w*k+j] * math.Exp(digamma(gamma[j]))
				s += phi[n][j]
			}
		}
		for j := range k {
			phi[n][j] /= s
		}
	}
	a0, g0 := 0.0, 0.0
	for j := range k {
		a0 += p.Alpha[j]
		g0 += gamma[j]
	}
	elog := make([]float64, k)
	for j := range k {
		elog[j] = digamma(gamma[j]) - digamma(g0)
	}
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	// E log p(θ|α)
	elbo = lg(a0)
	for j := range k {
		elbo += -lg(p.Alpha[j]) + (p.Alpha[j]-1)*elog[j]
	}
	// E log p(z|θ) + E log p(w|z,β) − E log q(z)
	for n, w := range tokens {
		for j := range k {
			if phi[n][j] > 0 {
				elbo += phi[n][j] * (elog[j] + math.Log(p.Beta[w*k+j]) - math.Log(phi[n][j]))
			}
		}
	}
	// − E log q(θ|γ)
	elbo -= lg(g0)
	for j := range k {
		elbo -= -lg(gamma[j]) + (gamma[j]-1)*elog[j]
	}
	return elbo
}

// tinyDoc draws a document of a few distinct words and returns it both as
// (terms, counts) and as its list of tokens.
func tinyDoc(r *rand.Rand, d int) (terms, counts []int32, tokens []int) {
	n := 1 + r.IntN(4)
	for _, w := range r.Perm(d)[:n] {
		c := 1 + r.IntN(3)
		terms = append(terms, int32(w))
		counts = append(counts, int32(c))
		for range c {
			tokens = append(tokens, w)
		}
	}
	return terms, counts, tokens
}

func TestEStepMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		k, d := 2+r.IntN(4), 6+r.IntN(5)
		p := randomParams(r, k, d, false)
		const iters = 25
		p.Tol, p.MaxIter, p.Prune = 1e-300, iters, -1 // exactly iters iterations over all topics
		e := NewEStep(p)
		terms, counts, tokens := tinyDoc(r, d)
		bound := e.Expect(terms, counts)
		gamma := append([]float64(nil), e.Infer(terms, counts)...)
		wantG, wantB := naiveEStep(p, tokens, iters)
		for j := range k {
			if math.Abs(gamma[j]-wantG[j]) > 1e-10 {
				t.Fatalf("trial %d: γ_%d = %.12g, brute force %.12g", trial, j, gamma[j], wantG[j])
			}
		}
		if math.Abs(bound-wantB) > 1e-9 {
			t.Fatalf("trial %d: ELBO %.12g, brute force %.12g", trial, bound, wantB)
		}
		// The expected counts add up to the document's counts.
		for i, c := range counts {
			s := 0.0
			for _, v := range e.Phi(i) {
				s += v
			}
			if math.Abs(s-float64(c)) > 1e-12 {
				t.Fatalf("trial %d: word %d has expected counts summing to %g, count %d", trial, i, s, c)
			}
		}
	}
}

// TestEStepBoundBelowLikelihood integrates the likelihood of tiny
// documents under two-topic LDA numerically and checks that the converged
// ELBO is below it, by no more than the mean-field gap of such short
// documents (up to about a nat).
func TestEStepBoundBelowLikelihood(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 10 {
		d := 5
		p := randomParams(r, 2, d, false)
		p.Tol = 1e-12
		terms, counts, tokens := tinyDoc(r, d)
		bound := NewEStep(p).Expect(terms, counts)
		// p(w) = ∫ Beta(x; α1, α2) Π_n (x β_{w,1} + (1−x) β_{w,2}) dx: the
		// Beta density's mass over each cell is exact (its CDF), the
		// polynomial is taken at the cell's midpoint.
		a1, a2 := p.Alpha[0], p.Alpha[1]
		const cells = 200000
		lik := 0.0
		cdf := func(x float64) float64 { return mathext.RegIncBeta(a1, a2, x) }
		prev := 0.0
		for c := range cells {
			hi := float64(c+1) / cells
			cur := cdf(hi)
			x := (float64(c) + 0.5) / cells
			v := 1.0
			for _, w := range tokens {
				v *= x*p.Beta[w*2] + (1-x)*p.Beta[w*2+1]
			}
			lik += (cur - prev) * v
			prev = cur
		}
		ll := math.Log(lik)
		if bound > ll+1e-6 || bound < ll-1.5 {
			t.Errorf("trial %d: ELBO %.6f, log-likelihood %.6f: not a close lower bound", trial, bound, ll)
		}
	}
}

func TestSingleTopicPosterior(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 10 {
		k, d := 2+r.IntN(4), 8
		p := randomParams(r, k, d, true)
		terms, counts, _ := tinyDoc(r, d)
		e := NewEStep(p)
		ll := e.Expect(terms, counts)
		post := append([]float64(nil), e.Infer(terms, counts)...)
		joint := make([]float64, k)
		tot := 0.0
		for j := range k {
			joint[j] = p.Alpha[j]
			for i, w := range terms {
				joint[j] *= math.Pow(p.Beta[int(w)*k+j], float64(counts[i]))
			}
			tot += joint[j]
		}
		if math.Abs(ll-math.Log(tot)) > 1e-10 {
			t.Fatalf("trial %d: log-likelihood %.12g, brute force %.12g", trial, ll, math.Log(tot))
		}
		for j := range k {
			if math.Abs(post[j]-joint[j]/tot) > 1e-12 {
				t.Fatalf("trial %d: posterior of topic %d %.12g, brute force %.12g", trial, j, post[j], joint[j]/tot)
			}
		}
	}
}

// BenchmarkEStep times the E-step (Expect) on documents of 100 distinct
// words over 20,000, for k=10 and k=50.
func BenchmarkEStep(b *testing.B) {
	for _, k := range []int{10, 50} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			r := rand.New(rand.NewPCG(9, 9))
			p := randomParams(r, k, 20000, false)
			e := NewEStep(p)
			var terms, counts []int32
			for _, w := range r.Perm(20000)[:100] {
				terms = append(terms, int32(w))
				counts = append(counts, int32(1+r.IntN(3)))
			}
			iters := 0
			b.ResetTimer()
			for range b.N {
				e.Expect(terms, counts)
				iters += e.Iters
			}
			b.ReportMetric(float64(iters)/float64(b.N), "iters/doc")
		})
	}
}

// TestEStepPrunedBound checks the E-step with topics dropped from a
// document's iteration: its bound is the textbook ELBO of the final γ with
// φ over the kept topics (zero on the dropped ones, whose γ_j = α_j), the
// expected counts of each word add up to its count, and the weights'
// statistics are E log θ_j = ψ(γ_j) − ψ(Σγ) for every topic.
func TestEStepPrunedBound(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	dropped := 0
	for trial := range 30 {
		k, d := 4+r.IntN(5), 8+r.IntN(8)
		p := randomParams(r, k, d, false)
		for j := range p.Alpha {
			p.Alpha[j] *= 0.2 // sparse documents: topics drop
		}
		p.Prune = 0.1
		e := NewEStep(p)
		terms, counts, tokens := tinyDoc(r, d)
		bound := e.Expect(terms, counts)
		gamma := append([]float64(nil), e.Infer(terms, counts)...)
		e.Expect(terms, counts)
		active := make([]bool, k)
		for j, g := range gamma {
			active[j] = g != p.Alpha[j]
			if !active[j] {
				dropped++
			}
		}
		if want := textbookELBO(p, tokens, gamma, active); math.Abs(bound-want) > 1e-9 {
			t.Fatalf("trial %d: bound %.12g, textbook ELBO over the kept topics %.12g", trial, bound, want)
		}
		g0 := 0.0
		for _, g := range gamma {
			g0 += g
		}
		for j, v := range e.Suff() {
			if want := digamma(gamma[j]) - digamma(g0); math.Abs(v-want) > 1e-12 {
				t.Fatalf("trial %d: E log θ_%d = %g, want %g", trial, j, v, want)
			}
		}
		for i, c := range counts {
			s := 0.0
			for j, v := range e.Phi(i) {
				if !active[j] && v != 0 {
					t.Fatalf("trial %d: dropped topic %d has expected count %g for word %d", trial, j, v, i)
				}
				s += v
			}
			if math.Abs(s-float64(c)) > 1e-12 {
				t.Fatalf("trial %d: word %d has expected counts summing to %g, count %d", trial, i, s, c)
			}
		}
	}
	if dropped == 0 {
		t.Fatal("no topic was dropped in any trial: the test does not exercise pruning")
	}
}

// TestEStepEmptyAfterDocument checks that a document without words, after
// one with words, gets the prior: γ = α and a bound of 0 (nothing is left
// over from the previous document's buffers).
func TestEStepEmptyAfterDocument(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	p := randomParams(r, 6, 30, false)
	e := NewEStep(p)
	terms, counts, _ := tinyDoc(r, 30)
	e.Expect(terms, counts)
	for j, g := range e.Infer(nil, nil) {
		if g != p.Alpha[j] {
			t.Fatalf("empty document: γ_%d = %g, α_%d = %g", j, g, j, p.Alpha[j])
		}
	}
	e.Expect(terms, counts)
	if b := e.Expect(nil, nil); math.Abs(b) > 1e-12 {
		t.Fatalf("empty document: bound %g, want 0", b)
	}
}

// TestEStepOverrelax checks the stretched fixed-point iteration on
// documents of overlapping topics (a shared word distribution in each, as
// in real text): run to convergence it ends at fixed points whose bounds
// are those of the plain iteration's (the same point, or on a few
// documents another local optimum of the document's bound, no worse in
// total), and at the EM passes' tolerance it takes fewer iterations.
func TestEStepOverrelax(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const k, d = 20, 300
	p := &TopicParams{K: k, D: d, Alpha: make([]float64, k), Beta: make([]float64, k*d)}
	common := make([]float64, d)
	for w := range d {
		common[w] = r.ExpFloat64()
	}
	for j := range k {
		s := 0.0
		for w := range d {
			v := 0.5 * common[w]
			if r.IntN(10) == 0 {
				v += 8 * r.ExpFloat64()
			}
			p.Beta[w*k+j] = v + 1e-6
			s += v + 1e-6
		}
		for w := range d {
			p.Beta[w*k+j] /= s
		}
		p.Alpha[j] = 0.1
	}
	draw := func() (terms, counts []int32) {
		cnt := make([]int32, d)
		a, b := r.IntN(k), r.IntN(k)
		for range 40 + r.IntN(80) {
			j := a
			if r.IntN(3) == 0 {
				j = b
			}
			u, w := r.Float64(), 0
			for ; w < d-1; w++ {
				if u -= p.Beta[w*k+j]; u < 0 {
					break
				}
			}
			cnt[w]++
		}
		for w, c := range cnt {
			if c > 0 {
				terms, counts = append(terms, int32(w)), append(counts, c)
			}
		}
		return terms, counts
	}
	estep := func(tol, prune, relax float64) *EStep {
		q := *p
		q.Tol, q.MaxIter, q.Prune, q.Overrelax = tol, 5000, prune, relax
		return NewEStep(&q)
	}
	plainT, relaxT := estep(1e-12, -1, 1), estep(1e-12, -1, 1.3)
	plainL, relaxL := estep(0.03, 0.01, 1), estep(0.03, 0.01, 1.3)
	const docs = 200
	itPlain, itRelax, same := 0, 0, 0
	sumPlain, sumRelax := 0.0, 0.0
	for doc := range docs {
		terms, counts := draw()
		bp := plainT.Expect(terms, counts)
		want := append([]float64(nil), plainT.gamma...)
		br := relaxT.Expect(terms, counts)
		if relaxT.Iters == 5000 {
			t.Fatalf("document %d: the stretched iteration did not converge", doc)
		}
		sumPlain += bp
		sumRelax += br
		if math.Abs(br-bp) < 1e-9*math.Abs(bp) {
			same++
			for j, g := range relaxT.gamma {
				if math.Abs(g-want[j]) > 1e-6*(1+want[j]) {
					t.Fatalf("document %d: the same bound at γ_%d = %.10g stretched, %.10g plain", doc, j, g, want[j])
				}
			}
		}
		plainL.Expect(terms, counts)
		relaxL.Expect(terms, counts)
		itPlain += plainL.Iters
		itRelax += relaxL.Iters
	}
	t.Logf("%d of %d documents at the same fixed point; bounds %.6f plain, %.6f stretched; iterations at tolerance 0.03: %d plain, %d stretched", same, docs, sumPlain, sumRelax, itPlain, itRelax)
	if same < docs*9/10 || sumRelax < sumPlain-1e-9*math.Abs(sumPlain) {
		t.Errorf("stretched steps: %d of %d documents at the plain fixed point, bounds %.6f against %.6f", same, docs, sumRelax, sumPlain)
	}
	if itRelax >= itPlain {
		t.Errorf("stretched steps took %d iterations, plain ones %d", itRelax, itPlain)
	}
}

// TestEStepFirstIteration checks that a document's E-step does not depend
// on the documents before it: the first iteration's values kept for its
// length (EStep.first) give the result of a fresh E-step, bit for bit.
func TestEStepFirstIteration(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 15))
	const k, d = 6, 50
	p := randomParams(r, k, d, false)
	docA, cA := []int32{1, 4, 9}, []int32{2, 1, 3} // 6 tokens
	docB, cB := []int32{0, 7, 8, 20}, []int32{1, 1, 1, 3}
	fresh := NewEStep(p)
	want := fresh.Expect(docB, cB)
	wantGamma := slices.Clone(fresh.Infer(docB, cB))
	used := NewEStep(p)
	used.Expect(docA, cA)
	if got := used.Expect(docB, cB); got != want {
		t.Errorf("bound %.17g after another document of the same length, %.17g fresh", got, want)
	}
	if got := used.Infer(docB, cB); !slices.Equal(got, wantGamma) {
		t.Errorf("γ %v after another document of the same length, %v fresh", got, wantGamma)
	}
}
