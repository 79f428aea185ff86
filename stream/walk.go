package stream

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// WalkFiles calls fn for each regular file under root, depth first, each
// directory's entries in name order (filepath.WalkDir's order), leaving out
// every file and directory below root whose name skip reports. Symbolic
// links to files are followed (fn gets the target's info), links to
// directories are not. It stops at ctx's end and at fn's first error,
// which it returns. The directories of text files, the dataset
// directories of Parquet parts and the provenance of both walk with it,
// so that all three see the same files in the same order. A root with a
// registered scheme (RegisterFileSystem) is walked through its FileSystem.
func WalkFiles(ctx context.Context, root string, skip func(name string) bool, fn func(path string, info fs.FileInfo) error) error {
	if f, err := fileSystem(root); err != nil {
		return err
	} else if f != nil {
		// As filepath.WalkDir, fn's fs.SkipAll ends the walk without error.
		if err := walkRemote(ctx, f, root, skip, fn); err != fs.SkipAll {
			return err
		}
		return nil
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p != root && skip(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		info, err := os.Stat(p) // follows links, unlike d.Info
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		return fn(p, info)
	})
}

// Hidden reports whether a file name starts with "." (.git, .DS_Store,
// editor backups, .crc checksums): a skip for WalkFiles.
func Hidden(name string) bool { return strings.HasPrefix(name, ".") }
