package synth

import (
	"bytes"
	"encoding/json"

	"github.com/streamfit/streamfit/internal/stream"
)

// writeTruth stores the model m behind generated data as JSON, atomically,
// with params (how the data was generated) as its last field, "params": the
// file reads as the model. With topics, m's topics field must be null, and
// the topics are encoded in its place one row at a time, in compact JSON;
// otherwise the JSON is indented.
func writeTruth(path string, m any, params map[string]any, topics [][]float64) error {
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
