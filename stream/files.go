package stream

import (
	"io/fs"

	core "github.com/streamfit/streamfit/internal/stream"
)

// File is an opened input file: read in order (Read, Seek) or at offsets
// (ReadAt, which may be called concurrently). *os.File is one; the files
// of a registered FileSystem are others.
type File = core.File

// FileSystem serves the input paths of one scheme (gs://bucket/key for
// "gs"): their files, descriptions and directory listings. Paths are
// passed whole, scheme included.
type FileSystem = core.FileSystem

// RegisterFileSystem makes the paths scheme://... readable wherever the
// package reads an input (Open, OpenDense, OpenText, Detect, vocabularies,
// dataset directories and a statistics file's provenance), as an object
// store's client does for its URLs. It panics if the scheme is taken.
func RegisterFileSystem(scheme string, f FileSystem) { core.RegisterFileSystem(scheme, f) }

// Scheme returns the scheme of a path written scheme://..., or "" for a
// path of the operating system's.
func Scheme(path string) string { return core.Scheme(path) }

// OpenFile opens an input file: with os.Open, or through the FileSystem
// registered for its scheme.
func OpenFile(path string) (File, error) { return core.OpenFile(path) }

// StatFile describes an input file or directory: with os.Stat, or through
// the FileSystem registered for its scheme.
func StatFile(path string) (fs.FileInfo, error) { return core.StatFile(path) }
