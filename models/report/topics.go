package report

import (
	"container/heap"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/streamfit/streamfit/models"
	"gonum.org/v1/gonum/mat"
)

// TopWords is the number of words of a topic's bar chart, as in LDAvis.
const TopWords = 30

// lambdaSteps is the resolution of the relevance slider: λ moves in steps of
// 1/lambdaSteps, and each topic embeds every word that is among its TopWords
// most relevant at one of those steps.
const lambdaSteps = 100

// TopicView is what the page shows of a topic model.
type TopicView struct {
	K int `json:"k"`
	// Scale turns probabilities into the bar chart's unit: the fit's token
	// count (bars in expected tokens), or 1 when unknown (bars in
	// probability); Unit names it.
	Scale float64 `json:"scale"`
	Unit  string  `json:"unit"`
	// Weights are the topics' shares of the tokens, π = α/α₀.
	Weights []Num `json:"weights"`
	// X and Y place the topics on the map (classical scaling of the
	// Jensen–Shannon distances).
	X []Num `json:"x"`
	Y []Num `json:"y"`
	// Words and P are the embedded words and their corpus frequency
	// p(w) = Σₜ πₜ φₜ(w); the topics refer to them by index.
	Words []string `json:"words"`
	P     []Num6   `json:"p"`
	// Cand[t] lists the candidate words of topic t (indexes into Words) and
	// Phi[t] their probabilities φₜ(w).
	Cand [][]int32 `json:"cand"`
	Phi  [][]Num6  `json:"phi"`
	// Salient lists the TopWords most salient words (Chuang et al.), shown
	// when no topic is selected.
	Salient []int32 `json:"salient"`
	// Figures are per-topic numbers shown in the topic table.
	Figures []Figure `json:"figures,omitempty"`
	// Lambda is the slider's starting λ.
	Lambda float64 `json:"lambda"`
}

// Figure is a per-topic number, one value per topic (null where unknown).
type Figure struct {
	Name  string `json:"name"`
	About string `json:"about,omitempty"`
	Value []Num  `json:"value"`
}

// topicView computes the map, the candidate words and the saliency of m.
// vocab has m.D words or is nil (words are then shown as term ids).
func topicView(m *models.Model, vocab []string) *TopicView {
	k := m.K
	pi := models.TopicWeights(m.K, m.Alpha)
	p := models.WordMarginal(m.Topics, m.Alpha)
	v := &TopicView{K: k, Scale: 1, Unit: "probability", Lambda: 0.6}
	if m.Fit != nil && m.Fit.Tokens > 0 {
		v.Scale, v.Unit = float64(m.Fit.Tokens), "expected tokens"
	}
	v.Weights = nums(pi)
	x, y := scale2(jsDistances(m.Topics))
	v.X, v.Y = nums(x), nums(y)

	index := map[int]int32{}
	ref := func(w int) int32 {
		if i, ok := index[w]; ok {
			return i
		}
		i := int32(len(v.Words))
		index[w] = i
		word := "#" + strconv.Itoa(w)
		if vocab != nil {
			word = vocab[w]
		}
		v.Words = append(v.Words, word)
		v.P = append(v.P, Num6(p[w]))
		return i
	}
	cands := make([][]int, k)
	parallel(k, func(t int) { cands[t] = candidates(m.Topics[t], p) })
	v.Cand = make([][]int32, k)
	v.Phi = make([][]Num6, k)
	for t, c := range cands {
		for _, w := range c {
			v.Cand[t] = append(v.Cand[t], ref(w))
			v.Phi[t] = append(v.Phi[t], Num6(m.Topics[t][w]))
		}
	}
	for _, w := range salient(m.Topics, pi, p, TopWords) {
		v.Salient = append(v.Salient, ref(w))
	}
	return v
}

// parallel calls f(0..n-1) on GOMAXPROCS goroutines.
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// jsDistances returns the k×k matrix of Jensen–Shannon distances
// √JSD(φₛ, φₜ) (natural log; a metric, so classical scaling sees distances),
// at one logarithm per nonzero word and pair:
// JSD = ½(Σp log p + Σq log q) − Σ m log m + log 2 with m = (p+q)/2.
func jsDistances(topics [][]float64) *mat.SymDense {
	k := len(topics)
	neg := make([]float64, k) // Σ p log p
	for t, row := range topics {
		for _, x := range row {
			if x > 0 {
				neg[t] += x * math.Log(x)
			}
		}
	}
	dist := mat.NewSymDense(k, nil)
	parallel(k, func(s int) {
		for t := s + 1; t < k; t++ {
			a, b := topics[s], topics[t]
			var mlogm float64
			for w, x := range a {
				if m := (x + b[w]) / 2; m > 0 {
					mlogm += m * math.Log(m)
				}
			}
			js := (neg[s]+neg[t])/2 - mlogm
			dist.SetSym(s, t, math.Sqrt(max(js, 0)))
		}
	})
	return dist
}

// scale2 places k points in the plane so that their distances approximate
// dist: classical (Torgerson) scaling, the top two eigenpairs of
// B = −½ J D⁽²⁾ J. A missing or negative second eigenvalue gives y = 0.
func scale2(dist *mat.SymDense) (x, y []float64) {
	k := dist.SymmetricDim()
	x, y = make([]float64, k), make([]float64, k)
	if k < 2 {
		return x, y
	}
	sq := mat.NewSymDense(k, nil)
	rowMean := make([]float64, k)
	var all float64
	for i := range k {
		for j := range k {
			d := dist.At(i, j)
			rowMean[i] += d * d / float64(k)
		}
		all += rowMean[i] / float64(k)
	}
	for i := range k {
		for j := i; j < k; j++ {
			d := dist.At(i, j)
			sq.SetSym(i, j, -(d*d-rowMean[i]-rowMean[j]+all)/2)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sq, true) {
		return x, y
	}
	vals := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	for c, out := range [][]float64{x, y} {
		j := k - 1 - c
		if vals[j] <= 0 {
			break
		}
		s := math.Sqrt(vals[j])
		// Fix the eigenvector's sign: its largest entry is positive.
		big := 0
		for i := range k {
			if math.Abs(vecs.At(i, j)) > math.Abs(vecs.At(big, j)) {
				big = i
			}
		}
		if vecs.At(big, j) < 0 {
			s = -s
		}
		for i := range k {
			out[i] = s * vecs.At(i, j)
		}
	}
	return x, y
}

// candidates returns the words of a topic that are among its TopWords most
// relevant at some step of the λ slider, relevance being
// r_λ(w) = λ log φ(w) + (1−λ) log(φ(w)/p(w)), ordered by φ descending.
//
// A word that TopWords others beat in both log φ and lift is never shown, so
// the Pareto layers are found first (one sort of the topic and a bounded
// heap); the slider's steps are then tried on that short list.
func candidates(phi, p []float64) []int {
	idx := make([]int, 0, len(phi))
	for w, x := range phi {
		if x > 0 && p[w] > 0 {
			idx = append(idx, w)
		}
	}
	sort.Slice(idx, func(a, b int) bool {
		if phi[idx[a]] != phi[idx[b]] {
			return phi[idx[a]] > phi[idx[b]]
		}
		return idx[a] < idx[b]
	})
	lift := func(w int) float64 { return math.Log(phi[w] / p[w]) }
	// Words are visited by φ descending; h keeps the TopWords largest lifts
	// seen so far: a word whose lift is below all of them is beaten by
	// TopWords words at every λ.
	h := &minHeap{}
	var pareto []int
	for _, w := range idx {
		l := lift(w)
		if h.Len() == TopWords && l < (*h)[0] {
			continue
		}
		pareto = append(pareto, w)
		if h.Len() < TopWords {
			heap.Push(h, l)
		} else if l > (*h)[0] {
			(*h)[0] = l
			heap.Fix(h, 0)
		}
	}
	keep := make([]bool, len(pareto))
	rel := make([]float64, len(pareto))
	order := make([]int, len(pareto))
	for step := 0; step <= lambdaSteps; step++ {
		lam := float64(step) / lambdaSteps
		for i, w := range pareto {
			rel[i] = lam*math.Log(phi[w]) + (1-lam)*lift(w)
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return rel[order[a]] > rel[order[b]] })
		for _, i := range order[:min(TopWords, len(order))] {
			keep[i] = true
		}
	}
	var out []int
	for i, w := range pareto {
		if keep[i] {
			out = append(out, w)
		}
	}
	return out
}

// minHeap is a heap of float64, smallest first.
type minHeap []float64

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// salient returns the n most salient words, saliency(w) = p(w)·KL(P(t|w) ‖ π)
// (Chuang, Manning & Heer, "Termite", 2012), most salient first.
func salient(topics [][]float64, pi, p []float64, n int) []int {
	d := len(p)
	sal := make([]float64, d)
	for w := range d {
		if p[w] <= 0 {
			continue
		}
		var kl float64
		for t, row := range topics {
			if q := pi[t] * row[w] / p[w]; q > 0 {
				kl += q * math.Log(q/pi[t])
			}
		}
		sal[w] = p[w] * kl
	}
	idx := make([]int, d)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case sal[a] > sal[b]:
			return -1
		case sal[a] < sal[b]:
			return 1
		}
		return 0
	})
	return idx[:min(n, d)]
}

// figureOf checks a per-topic figure's length.
func figureOf(name, about string, vals []float64, k int) (Figure, error) {
	if len(vals) != k {
		return Figure{}, fmt.Errorf("%s has %d values, the model has k=%d topics", name, len(vals), k)
	}
	return Figure{Name: name, About: about, Value: nums(vals)}, nil
}
