package shard

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/streamfit/streamfit/implicit/statsfile"
	"github.com/streamfit/streamfit/stream"
)

// fingerprintSpan is how much of each end of a file its fingerprint reads.
const fingerprintSpan = 64 << 10

// Describe returns the provenance of the input file at path, as the
// statistics of a shard record it (statsfile.Header.Inputs). A
// directory (of text files, or a dataset of Parquet parts) is described by
// its tree: every file under it but hidden ones (names starting with "."),
// by relative path, size and modification time, so that a file added,
// removed, grown or rewritten anywhere below changes its fingerprint; its
// size is their total and its time the latest.
func Describe(path string) (statsfile.Input, error) {
	f, err := stream.OpenFile(path)
	if err != nil {
		return statsfile.Input{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return statsfile.Input{}, err
	}
	if st.IsDir() {
		return describeDir(path)
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\n", st.Size())
	if st.Mode().IsRegular() {
		head := make([]byte, min(st.Size(), fingerprintSpan))
		if _, err := io.ReadFull(f, head); err != nil {
			return statsfile.Input{}, fmt.Errorf("%s: %w", path, err)
		}
		h.Write(head)
		if tail := min(st.Size(), fingerprintSpan); st.Size() > fingerprintSpan {
			buf := make([]byte, tail)
			if _, err := f.ReadAt(buf, st.Size()-tail); err != nil {
				return statsfile.Input{}, fmt.Errorf("%s: %w", path, err)
			}
			h.Write(buf)
		}
	}
	return statsfile.Input{Path: path, Size: st.Size(), ModTime: st.ModTime().UTC(), Fingerprint: fmt.Sprintf("%016x", h.Sum64())}, nil
}

// describeDir is Describe of a directory.
func describeDir(dir string) (statsfile.Input, error) {
	h := fnv.New64a()
	in := statsfile.Input{Path: dir}
	err := stream.WalkFiles(context.Background(), dir, stream.Hidden, func(p string, st fs.FileInfo) error {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\n", filepath.ToSlash(rel), st.Size(), st.ModTime().UnixNano())
		in.Size += st.Size()
		if t := st.ModTime().UTC(); t.After(in.ModTime) {
			in.ModTime = t
		}
		return nil
	})
	if err != nil {
		return statsfile.Input{}, err
	}
	in.Fingerprint = fmt.Sprintf("%016x", h.Sum64())
	return in, nil
}
