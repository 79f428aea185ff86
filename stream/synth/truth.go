package synth

import (
	"bytes"
	"encoding/json"

	"github.com/streamfit/streamfit/stream"
)

// TopicTruth is the topic model a generated corpus is drawn from. Its JSON
// is that of a fitted topic model's file, so a truth file reads as one.
type TopicTruth struct {
	// Model is "lda", or "topic" for the single-topic model.
	Model string `json:"model"`
	K     int    `json:"k"`
	D     int    `json:"d"`
	// Alpha0 is the Dirichlet concentration α₀ (0 for "topic").
	Alpha0 float64 `json:"alpha0"`
	// Alpha holds the Dirichlet parameters (LDA) or the topic weights
	// (single topic).
	Alpha []float64 `json:"alpha"`
	// Topics has K rows of length D, each a distribution over the words.
	Topics [][]float64 `json:"topics"`
}

// WriteTruth stores the model m behind generated data as JSON, atomically,
// with params (how the data was generated) as its last field, "params": the
// file reads as the model. With topics, m's topics field must be null, and
// the topics are encoded in its place one row at a time, in compact JSON;
// otherwise the JSON is indented.
func WriteTruth(path string, m any, params map[string]any, topics [][]float64) error {
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
	if topics != nil {
		return stream.WriteJSONRows(path, json.RawMessage(b), "topics", topics)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", " "); err != nil {
		return err
	}
	out.WriteByte('\n')
	return stream.WriteFileAtomic(path, out.Bytes())
}
