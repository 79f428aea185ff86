package synth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"

	"github.com/streamfit/streamfit/internal/stream"
)

// Truth is the known model behind generated data, written as a JSON truth file
// that `streamfit eval` compares fitted models with. The field names match the
// model file's, so a truth file can be read as a model.
type Truth struct {
	// Model is "lda" or "topic" (single-topic), or the name of a dense model.
	Model string `json:"model"`
	K     int    `json:"k"`
	D     int    `json:"d"`
	// Alpha0 is the Dirichlet concentration α₀ (0 for the single-topic model).
	Alpha0 float64 `json:"alpha0"`
	// Alpha holds the Dirichlet parameters (LDA) or the topic weights (single topic).
	Alpha []float64 `json:"alpha"`
	// Topics has K rows of length D, each a distribution over the vocabulary.
	Topics [][]float64 `json:"topics"`
	// Params records how the data was generated.
	Params map[string]any `json:"params,omitempty"`
}

// Write stores the truth as JSON, atomically, encoding the topics one row at a
// time (a 100,000-word vocabulary with k=100 is 10⁷ probabilities).
func (t *Truth) Write(path string) error {
	head := *t
	head.Topics = nil
	return stream.WriteJSONRows(path, &head, "topics", t.Topics)
}

// ReadTruth reads a truth file written by Write and checks its shape.
func ReadTruth(path string) (*Truth, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t Truth
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("%s: not a truth file: %w", path, err)
	}
	if len(t.Topics) != t.K || len(t.Alpha) != t.K {
		return nil, fmt.Errorf("%s: k=%d but %d topics and %d alphas", path, t.K, len(t.Topics), len(t.Alpha))
	}
	for i, row := range t.Topics {
		if len(row) != t.D {
			return nil, fmt.Errorf("%s: topic %d has %d entries, d=%d", path, i, len(row), t.D)
		}
		var s float64
		for _, x := range row {
			s += x
		}
		if math.Abs(s-1) > 1e-6 {
			return nil, fmt.Errorf("%s: topic %d sums to %g, not 1", path, i, s)
		}
	}
	return &t, nil
}

// writeTruth stores the model m behind generated rows as indented JSON,
// atomically, with params (how the rows were generated) as its last field,
// "params": the file reads as the model.
func writeTruth(path string, m any, params map[string]any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(params) > 0 && len(b) > 2 && b[len(b)-1] == '}' {
		p, err := json.Marshal(params)
		if err != nil {
			return err
		}
		b = append(append(append(b[:len(b)-1], `,"params":`...), p...), '}')
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", " "); err != nil {
		return err
	}
	out.WriteByte('\n')
	return stream.WriteFileAtomic(path, out.Bytes())
}
