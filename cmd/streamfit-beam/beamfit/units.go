package beamfit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/streamfit/streamfit/cmd/streamfit-beam/objstore"
	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/models/shard"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/columnar"
)

// Unit is one work unit of a pass: a row group of a Parquet file or a
// record batch of an Arrow IPC file, or a whole file of a format without
// an index of pieces (UCI docword, text, Arrow IPC streams, the long
// layout).
type Unit struct {
	// Input describes the file (shard.Describe) as it was when the
	// pipeline was planned, with the range of documents the unit covers
	// (nil: the whole file); it is the provenance of the unit's statistics.
	Input statsfile.Input `json:"input"`
	// Piece is the index of the row group (record batch); −1 for a whole
	// file.
	Piece int `json:"piece"`
	// Version is the generation (GCS) or ETag (S3) of an object input
	// when the pipeline was planned, "" for a local file: the only
	// version of it the unit reads.
	Version string `json:"version,omitempty"`
}

// String names the unit in errors.
func (u Unit) String() string {
	if u.Piece < 0 {
		return u.Input.Path
	}
	return fmt.Sprintf("%s (piece %d, rows %d:%d)", u.Input.Path, u.Piece, u.Input.Docs[0], u.Input.Docs[1])
}

// open opens the documents of the unit, read with o.
func (u Unit) open(o stream.Options) (stream.DocSource, error) {
	u.pin()
	if u.Piece < 0 {
		return stream.Open(u.Input.Path, o)
	}
	src, err := columnar.OpenPieces(u.Input.Path, o, u.Piece, u.Piece+1)
	if err != nil {
		return nil, err
	}
	if r := src.DocRange(); r != *u.Input.Docs {
		return nil, fmt.Errorf("%v: the file now holds documents %d:%d there: it changed after the pipeline was planned", u, r[0], r[1])
	}
	return src, nil
}

// encodeUnit and decodeUnit are the Beam coder of Unit (JSON: the input's
// time and optional range have no schema coder).
func encodeUnit(u Unit) ([]byte, error) { return json.Marshal(u) }

func decodeUnit(b []byte) (Unit, error) {
	var u Unit
	err := json.Unmarshal(b, &u)
	return u, err
}

// ErrNoInput reports a pipeline without input files.
var ErrNoInput = errors.New("no input files")

// Expand returns the files that the arguments name: each a path, a glob
// pattern (filepath.Match syntax) or a dataset directory of Parquet or
// Arrow files (columnar.DatasetFiles: its files in the order a dataset
// input reads them), in the order given, a glob's matches sorted. A
// pattern that matches nothing is an error, as is a missing file. Paths
// may be file:// URLs, or gs:// and s3:// objects, globs and directories
// (prefixes) on object stores.
func Expand(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		a = LocalPath(a)
		if m, ok, err := expandRemote(a); ok {
			if err != nil {
				return nil, err
			}
			files = append(files, m...)
			continue
		}
		if st, err := os.Stat(a); err == nil && st.IsDir() {
			m, err := columnar.DatasetFiles(a)
			if err != nil {
				return nil, err
			}
			files = append(files, m...)
			continue
		}
		m, err := filepath.Glob(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, err)
		}
		if len(m) == 0 {
			if hasMeta(a) {
				return nil, fmt.Errorf("%s: no file matches", a)
			}
			m = []string{a} // a plain path: Plan reports it missing
		}
		slices.Sort(m)
		files = append(files, m...)
	}
	if len(files) == 0 {
		return nil, ErrNoInput
	}
	return files, nil
}

// hasMeta reports whether the pattern holds a glob metacharacter.
func hasMeta(p string) bool {
	for _, c := range p {
		switch c {
		case '*', '?', '[', '\\':
			return true
		}
	}
	return false
}

// Plan cuts the files into work units: a unit per row group of a Parquet
// file or record batch of an Arrow IPC file, a unit per file otherwise (see
// Unit). Reading the units' documents with o gives the batches a pass over
// each whole file does (no batch spans two pieces), so the statistics of
// the units merge to exactly those of the files. A file given twice (the
// same content, by shard.Describe's fingerprint, under the same or
// another name) is refused with statsfile.ErrOverlap, as a merge of
// statistics covering it twice is.
func Plan(ctx context.Context, files []string, o stream.Options) ([]Unit, error) {
	return plan(ctx, files, o, func(path string, o stream.Options, first, end int) (any, error) {
		return columnar.OpenPieces(path, o, first, end)
	})
}

// PlanDense is Plan for files of dense sample rows (a dense model's fit):
// a unit per row group or record batch of a Parquet or Arrow IPC table, a
// unit per file otherwise. The row groups of the models that read rows in
// groups (sequences, snapshot sets) may cut a group: the unit of the row
// group where a group begins owns all of it (shard.Part.Groups), so every
// group is read whole, once.
func PlanDense(ctx context.Context, files []string, o stream.Options) ([]Unit, error) {
	return plan(ctx, files, o, func(path string, o stream.Options, first, end int) (any, error) {
		return columnar.OpenDensePieces(path, o, first, end)
	})
}

// plan is Plan, with open opening a range of pieces of a file.
func plan(ctx context.Context, files []string, o stream.Options, open func(path string, o stream.Options, first, end int) (any, error)) ([]Unit, error) {
	if len(files) == 0 {
		return nil, ErrNoInput
	}
	var units []Unit
	seen := map[string]string{}
	for _, path := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// The version first: the description and the pieces are then of it
		// or of a later one, which the units' reads refuse.
		version, err := objstore.Version(path)
		if err != nil {
			return nil, err
		}
		desc, err := shard.Describe(path)
		if err != nil {
			return nil, err
		}
		if first, ok := seen[desc.Fingerprint]; ok {
			return nil, fmt.Errorf("%s: %w: it is %s again (fingerprint %s)", path, statsfile.ErrOverlap, first, desc.Fingerprint)
		}
		seen[desc.Fingerprint] = path
		pieces, err := filePieces(path, o, open)
		if err != nil {
			return nil, err
		}
		if pieces == nil {
			units = append(units, Unit{Input: desc, Piece: -1, Version: version})
			continue
		}
		for _, p := range pieces {
			in := desc
			in.Docs = &[2]int64{p.FirstRow, p.FirstRow + p.Rows}
			units = append(units, Unit{Input: in, Piece: p.Index, Version: version})
		}
	}
	return units, nil
}

// filePieces lists the pieces of the file at path when a range of them can
// be read alone (open accepts the file), else nil.
func filePieces(path string, o stream.Options, open func(string, stream.Options, int, int) (any, error)) ([]columnar.Piece, error) {
	src, err := open(path, o, 0, -1)
	if errors.Is(err, columnar.ErrRange) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	stream.Close(src)
	return columnar.Pieces(path, o)
}
