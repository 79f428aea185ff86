package stream

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// AtomicFile is an output file written under a temporary name in the target's
// directory and renamed into place by Commit, so an interrupted or failed write
// never leaves a file that looks complete.
type AtomicFile struct {
	*os.File
	path string
	done bool
}

// CreateAtomic opens a temporary file beside path. A path that exists and
// is not a regular file (a device such as /dev/null, a named pipe, a
// directory) is refused: the rename of Commit would replace it.
func CreateAtomic(path string) (*AtomicFile, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "create", Path: path, Err: errors.New("not a regular file; an output is written beside it and renamed over it, which would replace it")}
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, hideTemp("create", path, err)
	}
	return &AtomicFile{File: f, path: path}, nil
}

// hideTemp names the final path in an error about the temporary file, whose
// name means nothing to the user.
func hideTemp(op, path string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// CheckWritable reports whether a file can be created at path, by creating
// and removing a temporary file beside it: a long command checks its outputs
// before it starts rather than failing at the end.
func CheckWritable(path string) error {
	f, err := CreateAtomic(path)
	if err != nil {
		return err
	}
	return f.Abort()
}

// Path is the final path the file will have after Commit.
func (a *AtomicFile) Path() string { return a.path }

// Commit syncs and closes the temporary file and renames it to the final path.
func (a *AtomicFile) Commit() error {
	if a.done {
		return errors.New("stream: AtomicFile committed or aborted twice")
	}
	a.done = true
	tmp := a.File.Name()
	err := a.File.Sync()
	if cerr := a.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, a.path)
	}
	if err != nil {
		os.Remove(tmp)
		return hideTemp("write", a.path, err)
	}
	return nil
}

// Abort closes and removes the temporary file; it is a no-op after Commit.
func (a *AtomicFile) Abort() error {
	if a.done {
		return nil
	}
	a.done = true
	a.File.Close()
	return os.Remove(a.File.Name())
}

// WriteFileAtomic writes data to path through a temporary file.
func WriteFileAtomic(path string, data []byte) error {
	f, err := CreateAtomic(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}
