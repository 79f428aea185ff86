package lda

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/solver"
	"gonum.org/v1/gonum/mat"
)

// recoverTopics maps the tensor eigenpairs back to topics and weights: column
// i of b (d×k) is M̂2·W·P·vᵢ for the eigenvector vᵢ of res (see Fit; docs/MATH.md
// §4.4). It projects each topic onto the simplex and orders them by weight.
func recoverTopics(res *solver.Result, b *mat.Dense, a0 float64, single bool) *models.Model {
	d, k := b.Dims()
	m := &models.Model{Model: "lda", K: k, D: d, Alpha0: a0, Fit: &models.FitRecord{}}
	scale := (a0 + 2) / 2
	if single {
		m.Model, scale = "topic", 1
	}
	type topic struct {
		weight, lambda, moved float64
		mu                    []float64
	}
	topics := make([]topic, k)
	for i := range k {
		lam := res.Weights[i]
		mu := make([]float64, d)
		for j := range d {
			mu[j] = scale * lam * b.At(j, i)
		}
		wt := 1 / (lam * lam)
		if !single {
			wt = 4 * a0 * (a0 + 1) / ((a0 + 2) * (a0 + 2) * lam * lam)
		}
		moved := models.ProjectSimplex(mu)
		topics[i] = topic{weight: wt, lambda: lam, moved: moved, mu: mu}
	}
	sort.SliceStable(topics, func(i, j int) bool { return topics[i].weight > topics[j].weight })
	st := &m.Fit.Solver
	st.Restarts, st.Iters = res.Restarts, res.Iters
	st.Converged = res.Converged
	if !math.IsNaN(res.EigResidual) && !math.IsInf(res.EigResidual, 0) {
		st.EigResidual = res.EigResidual // JSON has no NaN; unknown stays 0
	}
	if !math.IsNaN(res.Residual) {
		r := res.Residual
		st.Residual = &r
	}
	for _, t := range topics {
		m.Alpha = append(m.Alpha, t.weight)
		m.Topics = append(m.Topics, t.mu)
		st.Eigenvalues = append(st.Eigenvalues, t.lambda)
		m.Fit.ProjectionL1 = append(m.Fit.ProjectionL1, t.moved)
	}
	return m
}

// Thresholds of diagnose. A fit with k no larger than the data support has
// Σα̂ within a few percent of α₀ (Σ weights ≈ 1 for one topic per
// document), raw topics that are nearly distributions (projection ℓ1 about
// 0.01–0.05 on the corpora of the tests) and a k-th eigenvalue of M̂2 that is
// a sizeable fraction of the first (0.26 with 10 topics of weights 0.06–0.13).
// A spurious topic breaks them (k=4 on a 3-topic corpus: Σα̂/α₀ 1.27, k-th
// eigenvalue 0.003 of the first; k=12 on 10 topics: mean projection ℓ1 816).
// (Spurious directions whose M̂2 curvature is negative are refused earlier,
// by the re-whitening.)
const (
	warnSumRatio   = 0.25 // warn when |Σα̂/α₀ − 1| exceeds this
	warnMoved      = 0.25 // warn about topics whose projection moved more ℓ1 mass
	warnEigenRatio = 0.01 // warn when λ_k(M̂2)/λ_1(M̂2) is below this
	failMeanMoved  = 0.5  // say the data depart from the model when the mean projection ℓ1 exceeds this
	failSumRatioLo = 0.2  // or when Σα̂/α₀ is outside [failSumRatioLo, 1/failSumRatioLo]
	warnList       = 10   // topics named in a warning; the rest are counted
	// warnTail flags a sketch whose singular values barely decay past the
	// k-th (σ_last/σ_k above it): its range is mostly noise and may span the
	// topics poorly. Measured: 0.07–0.15 on the test corpora and 0.75 on
	// corpus M, where a power pass changes the mean ℓ1 by 0.002; 0.98 at
	// vocabulary 100,000 and k=100, where one power pass takes the fit from
	// 75 to 100 topics found (mean ℓ1 0.39 → 0.16).
	warnTail = 0.95
)

// diagnose looks for the signs that the data depart from the model or that
// k exceeds what the data support: the weights not summing to α₀ (1 for the
// single-topic model), raw topics far from distributions, weak eigenvalues
// of M̂2, negative directions of M̂2 passed over by the whitening; and for a
// sketch too noisy to span the topics well. Nothing here refuses the fit:
// the topics are already the nearest distributions and α̂ is kept in
// (0, α₀] (clipAlpha), so a model far from the data becomes one line saying
// how far (a start that likelihood refinement can finish), and milder signs
// the warnings that name the topics concerned.
func diagnose(m *models.Model, cfg Config, b *basis) ([]string, error) {
	want := 1.0
	name := "the sum of the topic weights"
	if !cfg.Single {
		want, name = cfg.Alpha0, "Σα̂"
	}
	clipped := clipAlpha(m.Alpha, want)
	var sum, moved, most float64
	var far []string
	for i, a := range m.Alpha {
		sum += a
		mv := m.Fit.ProjectionL1[i]
		moved += mv
		most = max(most, mv)
		if mv > warnMoved {
			far = append(far, fmt.Sprintf("%d (%.2f)", i, mv))
		}
	}
	mean := moved / float64(len(m.Alpha))
	ratio := sum / want
	var out []string
	if b.tail > warnTail {
		advice := "one power pass (PowerIters = 1, one more pass over the data) usually fixes it"
		if b.passes > 1 {
			// The automatic (or a requested) power pass already ran.
			advice = fmt.Sprintf("after %d power pass(es) more documents, or another power pass (PowerIters = %d), may help", b.passes-1, b.passes)
		}
		out = append(out, fmt.Sprintf("the sketch of the second moment barely decays past the k-th direction (last singular value %.2f of the k-th): the topics may be poorly spanned, and the checks below may blame k; %s", b.tail, advice))
	}
	if mean > failMeanMoved || ratio < failSumRatioLo || ratio > 1/failSumRatioLo || b.negative > 0 || clipped > 0 {
		var extra string
		if b.negative > 0 {
			extra += fmt.Sprintf("; the second moment has %d negative directions at least %g of its k-th positive one, passed over by the whitening", b.negative, negRival)
		}
		if clipped > 0 {
			extra += fmt.Sprintf("; %d topic weights were clipped into (0, %g]", clipped, want)
		}
		out = append(out, fmt.Sprintf("the data depart from the model: the raw topics lie %.2f (ℓ1, mean; max %.2f) from distributions and were projected onto the simplex, and %s is %.3g against %g%s; the topics are a start for likelihood refinement (if k=%d exceeds what the data support, lower k)",
			mean, most, name, sum, want, extra, cfg.K))
	} else {
		if math.Abs(ratio-1) > warnSumRatio {
			out = append(out, fmt.Sprintf("%s is %.3g, expected %g: some topics may be spurious (k=%d may exceed what the data support; try a lower k)", name, sum, want, cfg.K))
		}
		if len(far) > 0 {
			list := strings.Join(far, ", ")
			if len(far) > warnList {
				// At k=1000 the full list would be a screen of numbers.
				list = fmt.Sprintf("%s and %d more (each topic's in fit.projection_l1)", strings.Join(far[:warnList], ", "), len(far)-warnList)
			}
			out = append(out, fmt.Sprintf("topics %s had more than %.2f of ℓ1 mass moved by the projection onto the simplex: poorly estimated or spurious (try a lower k)", list, warnMoved))
		}
	}
	if ev := m.Fit.M2Eigenvalues; len(ev) > 1 {
		weak := 0
		for _, v := range ev {
			if v < warnEigenRatio*ev[0] {
				weak++
			}
		}
		if weak > 0 {
			out = append(out, fmt.Sprintf("%d of the k=%d eigenvalues of the second moment are below %g of the largest (the smallest is %.2g of it): the data seem to support about %d topics; try a lower k",
				weak, cfg.K, warnEigenRatio, ev[len(ev)-1]/ev[0], cfg.K-weak))
		}
	}
	return out, nil
}

// clipAlpha keeps every weight in (0, total]: under the model each αᵢ is a
// positive share of α₀ (of 1 for the single-topic model), but a tensor
// eigenvalue near 0 gives a huge or non-finite 1/λ². It returns how many
// weights it changed.
func clipAlpha(alpha []float64, total float64) int {
	n := 0
	floor := total * 1e-6 / float64(len(alpha))
	for i, a := range alpha {
		switch {
		case math.IsNaN(a) || a < floor:
			alpha[i] = floor
		case a > total:
			alpha[i] = total
		default:
			continue
		}
		n++
	}
	return n
}
