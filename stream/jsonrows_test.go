package stream

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteJSONRows checks the streamed encoding against json.Marshal of the
// whole value, including strings that contain the key's text.
func TestWriteJSONRows(t *testing.T) {
	type doc struct {
		Name string      `json:"name"`
		Rows [][]float64 `json:"rows"`
		Tail []string    `json:"tail"`
	}
	rows := [][]float64{{0.25, 1e-300, 3}, {}, {-1.5}}
	full := doc{Name: `"rows":null`, Rows: rows, Tail: []string{"x"}}
	want, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v.json")
	head := full
	head.Rows = nil
	if err := WriteJSONRows(path, &head, "rows", rows); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, append(want, '\n')) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if err := WriteJSONRows(path, &full, "rows", rows); err == nil {
		t.Fatal("a value whose field is not null was accepted")
	}
}
