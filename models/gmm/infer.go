package gmm

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/streamfit/streamfit/models"
	"github.com/streamfit/streamfit/stream"
)

// Responsibilities calls emit with the posterior probability of each
// component given each row of src under m (scikit-learn's predict_proba),
// a batch at a time in row order: rows rows from row first, k shares per
// row summing to 1 (emit must not keep them). Row x gives component i
//
//	wᵢ N(x; μᵢ, σᵢ²I) / Σⱼ wⱼ N(x; μⱼ, σⱼ²I),
//
// (with diag(σᵢⱼ²) for σᵢ²I in a diagonal mixture), computed in
// logarithms, so that a row far from every mean still has
// shares. A component of weight ≤ 0 has share 0. workers bounds the
// goroutines per batch (0: one per CPU); the shares do not depend on it.
func Responsibilities(ctx context.Context, m *Model, src stream.DenseSource, workers int, emit func(first int64, rows int, shares []float64) error) error {
	return eachRow(ctx, m, src, workers, func(first int64, rows int, shares, _ []float64) error {
		return emit(first, rows, shares)
	})
}

// LogLikelihood returns the average log-likelihood per row of src under m
// (its held-out score, scikit-learn's GaussianMixture.score), streamed; workers as for Responsibilities, the
// figure does not depend on it (the rows' terms are added in row order).
func LogLikelihood(ctx context.Context, m *Model, src stream.DenseSource, workers int) (*models.RowScore, error) {
	var sum float64
	var n int64
	err := eachRow(ctx, m, src, workers, func(_ int64, rows int, _, ll []float64) error {
		for _, v := range ll {
			sum += v
		}
		n += int64(rows)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no rows", src.Info().Path)
	}
	return &models.RowScore{Rows: n, LogLik: sum / float64(n)}, nil
}

// eachRow calls emit with the shares and the log-likelihood log p(x) of
// every row of src under m, a batch at a time in row order.
func eachRow(ctx context.Context, m *Model, src stream.DenseSource, workers int, emit func(first int64, rows int, shares, ll []float64) error) error {
	post, err := m.posterior()
	if err != nil {
		return err
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var out, ll []float64
	for b, err := range src.Rows(ctx) {
		if err != nil {
			return err
		}
		if b.Cols != m.D {
			b.Release()
			return fmt.Errorf("%s: rows of %d values, the model's d=%d", src.Info().Path, b.Cols, m.D)
		}
		if n := b.Rows * m.K; cap(out) < n {
			out = make([]float64, n)
		} else {
			out = out[:n]
		}
		if cap(ll) < b.Rows {
			ll = make([]float64, b.Rows)
		} else {
			ll = ll[:b.Rows]
		}
		parts := min(workers, max(1, b.Rows/256))
		var wg sync.WaitGroup
		for p := range parts {
			lo, hi := p*b.Rows/parts, (p+1)*b.Rows/parts
			wg.Go(func() {
				for r := lo; r < hi; r++ {
					ll[r] = post.row(b.Data[r*m.D:(r+1)*m.D], out[r*m.K:(r+1)*m.K])
				}
			})
		}
		wg.Wait()
		first, rows := b.Start, b.Rows
		b.Release()
		if err := emit(first, rows, out, ll); err != nil {
			return err
		}
	}
	return nil
}

// posterior holds what the shares of a row need of a model: each
// component's log weight and normalising constant and its inverse
// variances.
type posterior struct {
	means  [][]float64
	logC   []float64   // log wᵢ − ½ Σⱼ log(2πσᵢⱼ²); −∞ for wᵢ ≤ 0
	halfIn []float64   // 1/(2σᵢ²) of a spherical mixture
	diag   [][]float64 // 1/(2σᵢⱼ²) of a diagonal one
}

func (m *Model) posterior() (*posterior, error) {
	if err := m.validate(); err != nil {
		return nil, err
	}
	p := &posterior{means: m.Means, logC: make([]float64, m.K), halfIn: make([]float64, m.K)}
	if m.IsDiag() {
		p.diag = make([][]float64, m.K)
	}
	weighted := false
	for i := range m.K {
		var logDet float64 // Σⱼ log(2πσᵢⱼ²)
		if m.IsDiag() {
			p.diag[i] = make([]float64, m.D)
			for j, v := range m.Diag[i] {
				if !(v > 0) || math.IsInf(v, 1) {
					return nil, fmt.Errorf("gmm: component %d, feature %d has variance %g; its responsibilities need a finite variance > 0", i, j, v)
				}
				p.diag[i][j] = 1 / (2 * v)
				logDet += math.Log(2 * math.Pi * v)
			}
		} else {
			v := m.Variances[i]
			if !(v > 0) || math.IsInf(v, 1) {
				return nil, fmt.Errorf("gmm: component %d has variance %g; its responsibilities need a finite variance > 0", i, v)
			}
			p.halfIn[i] = 1 / (2 * v)
			logDet = float64(m.D) * math.Log(2*math.Pi*v)
		}
		if w := m.Weights[i]; w > 0 {
			p.logC[i] = math.Log(w) - logDet/2
			weighted = true
		} else {
			p.logC[i] = math.Inf(-1)
		}
	}
	if !weighted {
		return nil, fmt.Errorf("gmm: no component has a positive weight")
	}
	return p, nil
}

// row writes the shares of x into out and returns log p(x).
func (p *posterior) row(x, out []float64) float64 {
	top := math.Inf(-1)
	for i, mu := range p.means {
		if p.diag != nil {
			q := 0.0
			for j, v := range x {
				d := v - mu[j]
				q += d * d * p.diag[i][j]
			}
			out[i] = p.logC[i] - q
		} else {
			d2 := 0.0
			for j, v := range x {
				d := v - mu[j]
				d2 += d * d
			}
			out[i] = p.logC[i] - d2*p.halfIn[i]
		}
		top = max(top, out[i])
	}
	sum := 0.0
	for i, l := range out {
		out[i] = math.Exp(l - top)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return top + math.Log(sum)
}
