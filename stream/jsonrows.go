package stream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
)

// WriteJSONRows stores v as JSON at path, atomically, with the field whose
// key is key — which must encode as null in v — replaced by rows, encoded one
// row at a time. The bytes are those of json.Marshal of v with that field set
// to rows, plus a newline; a k×d matrix of probabilities (d=100,000, k=100:
// about 200 MB of text) is then never held as text in memory.
func WriteJSONRows(path string, v any, key string, rows [][]float64) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	// Only the key can contain the quotes unescaped: strings escape them.
	before, after, ok := bytes.Cut(b, []byte(`"`+key+`":null`))
	if !ok {
		return fmt.Errorf("%s: internal error: no null %q field in the encoded value", path, key)
	}
	f, err := CreateAtomic(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.Write(before)
	w.WriteString(`"` + key + `":[`)
	for i, row := range rows {
		if i > 0 {
			w.WriteByte(',')
		}
		r, err := json.Marshal(row)
		if err != nil {
			f.Abort()
			return fmt.Errorf("%s: row %d: %w", path, i, err)
		}
		w.Write(r)
	}
	w.WriteByte(']')
	w.Write(after)
	w.WriteByte('\n')
	if err := w.Flush(); err != nil {
		f.Abort()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Commit()
}
