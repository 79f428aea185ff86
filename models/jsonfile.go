package models

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/streamfit/streamfit/stream"
)

// WriteJSON writes v as indented JSON, with a final newline, to path
// atomically: the model files of the dense models.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return stream.WriteFileAtomic(path, append(b, '\n'))
}

// ReadJSON reads the JSON file at path into a new T and checks it with
// validate; what names the expected content ("a gmm model") when the file
// does not parse. Errors name the file.
func ReadJSON[T any](path, what string, validate func(*T) error) (*T, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m T
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: not %s: %w", path, what, err)
	}
	if err := validate(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}
