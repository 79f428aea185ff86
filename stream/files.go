package stream

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
)

// File is an opened input file: read in order (Read, Seek) or at offsets
// (ReadAt, which may be called concurrently). *os.File is one; the files
// of a registered FileSystem (object stores) are others.
type File interface {
	io.Reader
	io.ReaderAt
	io.Seeker
	io.Closer
	Stat() (fs.FileInfo, error)
}

// FileSystem serves the paths of one scheme, such as "gs" for
// gs://bucket/key. Paths are passed whole, scheme included; a directory is
// a prefix with files below it, whose entries are joined to it with "/".
type FileSystem interface {
	// Open opens the file at path.
	Open(path string) (File, error)
	// Stat describes the file or directory at path; a missing one is an
	// error wrapping fs.ErrNotExist.
	Stat(path string) (fs.FileInfo, error)
	// ReadDir lists the entries of the directory at path, sorted by name.
	ReadDir(path string) ([]fs.DirEntry, error)
}

var (
	fileSystemsMu sync.RWMutex
	fileSystems   = map[string]FileSystem{}
)

// RegisterFileSystem makes the paths scheme://... readable by every reader
// of the package (OpenFile, StatFile, WalkFiles). It panics if the scheme
// is taken or is not a URL scheme of two or more letters (one letter would
// be a Windows drive).
func RegisterFileSystem(scheme string, f FileSystem) {
	if len(scheme) < 2 || strings.ContainsFunc(scheme, func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9') }) {
		panic("stream: not a file system scheme: " + scheme)
	}
	fileSystemsMu.Lock()
	defer fileSystemsMu.Unlock()
	if _, dup := fileSystems[scheme]; dup {
		panic("stream: file system registered twice: " + scheme)
	}
	fileSystems[scheme] = f
}

// Scheme returns the scheme of a path written scheme://..., or "" for a
// path of the operating system's.
func Scheme(path string) string {
	i := strings.Index(path, "://")
	if i < 2 || strings.ContainsAny(path[:i], `/\.:`) {
		return ""
	}
	return path[:i]
}

// fileSystem returns the file system of a path with a scheme (nil for a
// path of the operating system's), or an error when none is registered.
func fileSystem(path string) (FileSystem, error) {
	s := Scheme(path)
	if s == "" {
		return nil, nil
	}
	fileSystemsMu.RLock()
	defer fileSystemsMu.RUnlock()
	f, ok := fileSystems[s]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("no file system for %s:// paths (known: %s)", s, knownSchemes())}
	}
	return f, nil
}

// knownSchemes lists the registered schemes; fileSystemsMu is held.
func knownSchemes() string {
	var s []string
	for k := range fileSystems {
		s = append(s, k+"://")
	}
	if len(s) == 0 {
		return "none"
	}
	slices.Sort(s)
	return strings.Join(s, ", ")
}

// OpenFile opens an input file: a path of the operating system's with
// os.Open, a path with a scheme with its registered FileSystem.
func OpenFile(path string) (File, error) {
	f, err := fileSystem(path)
	if err != nil {
		return nil, err
	}
	if f == nil {
		return os.Open(path)
	}
	return f.Open(path)
}

// StatFile describes an input file or directory (os.Stat, or its
// FileSystem's Stat).
func StatFile(path string) (fs.FileInfo, error) {
	f, err := fileSystem(path)
	if err != nil {
		return nil, err
	}
	if f == nil {
		return os.Stat(path)
	}
	return f.Stat(path)
}

// walkRemote is WalkFiles over a directory of a FileSystem: each
// directory's entries in name order, as filepath.WalkDir's.
func walkRemote(ctx context.Context, f FileSystem, dir string, skip func(name string) bool, fn func(path string, info fs.FileInfo) error) error {
	entries, err := f.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if skip(e.Name()) {
			continue
		}
		p := strings.TrimSuffix(dir, "/") + "/" + e.Name()
		if e.IsDir() {
			if err := walkRemote(ctx, f, p, skip, fn); err != nil {
				return err
			}
			continue
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			if err := fn(p, info); err != nil {
				return err
			}
		}
	}
	return nil
}
