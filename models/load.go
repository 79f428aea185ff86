package models

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
)

// LoadOptions say how Load completes a topic matrix written by another tool.
type LoadOptions struct {
	// Alpha, when positive, is the Dirichlet parameter given to every topic,
	// replacing the file's. When zero, a model keeps its own α; a matrix
	// without one (.npy, or Parquet without an alpha column) gets the
	// symmetric 1/k per topic (gensim's alpha="symmetric").
	Alpha float64
}

// Load reads a topic model for scoring: a streamfit model.json (Read), a
// NumPy .npy k×d matrix (ReadNPY; e.g. gensim's get_topics()), or a Parquet
// topic matrix (ReadTopicsParquet; the layout of fit --topics-parquet),
// chosen by the file's extension. The rows of a matrix are renormalized to
// sum to 1 in float64 (a float32 matrix is off by rounding); negative, NaN
// or infinite entries and all-zero rows are errors naming the row and column.
// A matrix becomes an "lda" model unless its Parquet metadata says otherwise.
func Load(path string, o LoadOptions) (*Model, error) {
	if o.Alpha < 0 || math.IsNaN(o.Alpha) || math.IsInf(o.Alpha, 0) {
		return nil, fmt.Errorf("α must be a finite positive number, got %g", o.Alpha)
	}
	var m *Model
	switch strings.ToLower(filepath.Ext(path)) {
	case ".npy":
		rows, err := ReadNPY(path)
		if err != nil {
			return nil, err
		}
		if m, err = FromMatrix(rows, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	case ".parquet", ".pq":
		t, err := ReadTopicsParquet(path)
		if err != nil {
			return nil, err
		}
		if m, err = FromMatrix(t.Topics, t.Alpha); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if t.Model != "" {
			m.Model = t.Model
		}
		if t.Vocab != nil {
			if len(t.Vocab) != m.D {
				return nil, fmt.Errorf("%s: metadata vocabulary of %d words, but topics of %d", path, len(t.Vocab), m.D)
			}
			m.Vocab = t.Vocab
		}
	default:
		var err error
		if m, err = Read(path); err != nil {
			return nil, err
		}
	}
	if o.Alpha > 0 {
		for i := range m.Alpha {
			m.Alpha[i] = o.Alpha
		}
		m.Alpha0 = o.Alpha * float64(m.K)
	}
	return m, nil
}

// FromMatrix makes an LDA model of the k rows of topics (same length d, each
// renormalized to sum to 1) and their Dirichlet parameters alpha (nil: 1/k
// each). The rows are not copied.
func FromMatrix(topics [][]float64, alpha []float64) (*Model, error) {
	k := len(topics)
	if k == 0 {
		return nil, fmt.Errorf("no topics")
	}
	d := len(topics[0])
	if d == 0 {
		return nil, fmt.Errorf("topics of length 0")
	}
	if alpha == nil {
		alpha = make([]float64, k)
		for i := range alpha {
			alpha[i] = 1 / float64(k)
		}
	}
	if len(alpha) != k {
		return nil, fmt.Errorf("%d topics but %d alphas", k, len(alpha))
	}
	m := &Model{Model: "lda", K: k, D: d, Alpha: alpha, Topics: topics}
	for i, row := range topics {
		if len(row) != d {
			return nil, fmt.Errorf("row %d has %d entries, row 0 has %d", i, len(row), d)
		}
		if a := alpha[i]; !(a > 0) || math.IsInf(a, 0) {
			return nil, fmt.Errorf("row %d: α = %g is not a finite positive number", i, a)
		}
		m.Alpha0 += alpha[i]
		s := 0.0
		for j, x := range row {
			if !(x >= 0) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("row %d, column %d: %g is not a probability", i, j, x)
			}
			s += x
		}
		if s == 0 {
			return nil, fmt.Errorf("row %d is all zeros", i)
		}
		for j := range row {
			row[j] /= s
		}
	}
	return m, nil
}
