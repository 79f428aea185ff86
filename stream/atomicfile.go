package stream

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// AtomicFile is an output file written under a temporary name in the target's
// directory and renamed into place by Commit, so an interrupted or failed write
// never leaves a file that looks complete.
//
// An output path that is a symbolic link is followed: the file it points to is
// replaced, the link stays. An output that is a character device or a FIFO
// (/dev/null, /dev/stdout, a named pipe) is written into directly: it cannot be
// replaced atomically, and replacing it would destroy it. Other special files
// (sockets, block devices) and directories are refused.
type AtomicFile struct {
	*os.File
	path   string // the path as given, for messages
	target string // the file Commit replaces: path with its symbolic links followed
	direct bool   // writing into a device or FIFO: nothing to rename or remove
	done   bool
}

// StaleTemp is the age beyond which a temporary file left beside an output by
// a killed write (".NAME.tmp-*", ".NAME.body-*") is removed by the next write
// of the same output: a live write keeps its temporary files fresh.
const StaleTemp = time.Hour

// CreateAtomic opens a temporary file beside path (beside the file a symbolic
// link at path points to), or path itself when it is a device or FIFO.
func CreateAtomic(path string) (*AtomicFile, error) {
	target, direct, err := outputTarget(path)
	if err != nil {
		return nil, err
	}
	if direct {
		f, err := os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return nil, hideTemp("open", path, err)
		}
		return &AtomicFile{File: f, path: path, target: target, direct: true}, nil
	}
	f, err := TempBeside(path, "tmp")
	if err != nil {
		return nil, err
	}
	return &AtomicFile{File: f, path: path, target: target}, nil
}

// TempBeside creates a hidden temporary file ".NAME.KIND-*" in the directory
// of the output path (of the file a symbolic link there points to), where it
// can be renamed onto the output, or in the system's temporary directory when
// the output is a device or FIFO. Temporary files of the same output and kind
// older than StaleTemp, left by a killed run, are removed first.
func TempBeside(path, kind string) (*os.File, error) {
	target, direct, err := outputTarget(path)
	if err != nil {
		return nil, err
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	if direct {
		dir = os.TempDir()
	}
	pattern := "." + base + "." + kind + "-*"
	if old, err := filepath.Glob(filepath.Join(dir, pattern)); err == nil {
		for _, f := range old {
			if st, err := os.Lstat(f); err == nil && st.Mode().IsRegular() && time.Since(st.ModTime()) > StaleTemp {
				os.Remove(f)
			}
		}
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, hideTemp("create", path, err)
	}
	return f, nil
}

// outputTarget follows the symbolic links at path (also to a file that does
// not exist yet) and reports whether the file there is written directly (a
// character device or FIFO); directories and other special files are errors.
func outputTarget(path string) (target string, direct bool, err error) {
	target = path
	for range 40 {
		st, err := os.Lstat(target)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return target, false, nil
		case err != nil:
			return "", false, err
		case st.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(target)
			if err != nil {
				return "", false, err
			}
			if !filepath.IsAbs(link) {
				link = filepath.Join(filepath.Dir(target), link)
			}
			target = link
			continue
		case st.IsDir():
			return "", false, &fs.PathError{Op: "write", Path: path, Err: errors.New("is a directory (name a file in it)")}
		case st.Mode()&(fs.ModeCharDevice|fs.ModeNamedPipe) != 0:
			return target, true, nil
		case !st.Mode().IsRegular():
			return "", false, &fs.PathError{Op: "write", Path: path, Err: fmt.Errorf("not a regular file (%s), refusing to replace it", kindOf(st.Mode()))}
		}
		return target, false, nil
	}
	return "", false, &fs.PathError{Op: "write", Path: path, Err: errors.New("too many levels of symbolic links")}
}

// kindOf names a special file's type.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "a special file"
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
// before it starts rather than failing at the end. A FIFO is not opened (that
// would wait for a reader).
func CheckWritable(path string) error {
	target, direct, err := outputTarget(path)
	if err != nil {
		return err
	}
	if direct {
		if st, err := os.Stat(target); err == nil && st.Mode()&fs.ModeNamedPipe != 0 {
			return nil
		}
	}
	f, err := CreateAtomic(path)
	if err != nil {
		return err
	}
	return f.Abort()
}

// CheckOutputs checks, before any work, that no output is one of the inputs
// and that no two outputs are the same file: files that exist are compared by
// device and inode (so another name of a file, a hard or symbolic link, is
// caught), outputs still to be created by their absolute paths with symbolic
// links followed. Character devices (/dev/null) may be named more than once.
func CheckOutputs(inputs, outputs []string) error {
	for i, out := range outputs {
		ost, oerr := os.Stat(out)
		if oerr == nil && ost.Mode()&fs.ModeCharDevice != 0 {
			continue
		}
		for _, in := range inputs {
			if in == "" {
				continue
			}
			if ist, err := os.Stat(in); err == nil && oerr == nil && os.SameFile(ist, ost) {
				return fmt.Errorf("output %s is the input %s: refusing to overwrite an input", out, in)
			}
		}
		for _, o2 := range outputs[:i] {
			if sameOutput(out, o2) {
				return fmt.Errorf("two outputs are one file (%s and %s): one would be lost", o2, out)
			}
		}
	}
	return nil
}

// sameOutput reports whether two output paths name one file.
func sameOutput(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	as, aerr := os.Stat(a)
	bs, berr := os.Stat(b)
	if aerr == nil && berr == nil {
		return os.SameFile(as, bs)
	}
	ta, _, err1 := outputTarget(a)
	tb, _, err2 := outputTarget(b)
	if err1 != nil || err2 != nil {
		return false
	}
	return absDir(ta) == absDir(tb)
}

// absDir is path made absolute with the symbolic links of its directory
// followed.
func absDir(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	dir, base := filepath.Split(abs)
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	return filepath.Join(strings.TrimSuffix(dir, string(filepath.Separator)), base)
}

// Path is the final path the file will have after Commit.
func (a *AtomicFile) Path() string { return a.path }

// Commit syncs and closes the temporary file and renames it onto the target
// (for a device or FIFO, closes it).
func (a *AtomicFile) Commit() error {
	if a.done {
		return errors.New("stream: AtomicFile committed or aborted twice")
	}
	a.done = true
	if a.direct {
		if err := a.File.Close(); err != nil {
			return hideTemp("write", a.path, err)
		}
		return nil
	}
	tmp := a.File.Name()
	err := a.File.Sync()
	if cerr := a.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, a.target)
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
	if a.direct {
		return nil
	}
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

// ErrReadOnly: an output file exists and is read-only for this user.
var ErrReadOnly = errors.New("the output exists and is read-only")

// CheckReplaceable refuses an existing regular file at path that is
// read-only: one the process may not write (another user's, say), or one
// nobody may (mode 0444, which rm asks about even for root). Writing an
// output replaces the file by renaming a new one over it, which the
// directory allows whatever the file's own mode, so such a file would be
// replaced silently where cp refuses and mv -i asks. A missing file, or
// one the process may write, is fine.
func CheckReplaceable(path string) error {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o222 != 0 && writableByUs(path) {
		return nil
	}
	return fmt.Errorf("%s: %w (mode %v): it is not replaced; remove it, make it writable, or give --force", path, ErrReadOnly, st.Mode().Perm())
}
