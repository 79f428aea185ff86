package main

import (
	"encoding/json"

	"github.com/streamfit/streamfit/models/report"
)

// printEvalJSON prints the result of an evaluation as JSON on stdout, with the
// SHA-256 of the model file it evaluated ("model_sha256"), by which
// `report --eval` tells the evaluation of this model from another's.
func (e *env) printEvalJSON(res any, modelPath string) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if sum, err := report.FileSHA256(modelPath); err == nil {
		m[report.EvalModelKey] = sum
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}
