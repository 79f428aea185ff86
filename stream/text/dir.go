package text

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strings"

	"github.com/streamfit/streamfit/internal/stream"
)

func init() {
	stream.Register(stream.Format{
		Name:      "text-dir",
		Match:     matchDir,
		OpenTexts: OpenDir,
	})
}

// matchDir claims directories, and only directories.
func matchDir(path string, head []byte) int {
	if head != nil {
		return 0
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return 2
	}
	return 0
}

// Dir is a TextSource over a directory tree holding one document per file.
// Files are taken depth first, each directory's entries sorted by name (the
// order of filepath.WalkDir), so document i is the same file on every pass.
// Names starting with "." (.git, .DS_Store, editor backups) are skipped;
// symbolic links to regular files are followed, links to directories are not.
// Each file may be plain, gzip or zstd compressed, up to MaxDocBytes after
// decompression; an empty file is an empty document.
//
// The tree is walked lazily, one directory listing per level at a time, so
// memory grows with the depth and width of the tree, never with the number of
// files: OpenDir walks it once to count the files and bytes, and each pass
// walks it again.
type Dir struct {
	root  string
	files int64
	total int64
	o     stream.Options
}

// OpenDir counts the files under root. An unreadable directory or a broken
// link is an error naming it, and so is a tree with no files (wrapping
// stream.ErrEmpty).
func OpenDir(root string, o stream.Options) (stream.TextSource, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, stream.Errorf(root, 0, -1, "", stream.ErrFormat, "not a directory (use format text-lines)")
	}
	d := &Dir{root: root, o: o.WithDefaults()}
	err = walkFiles(context.Background(), root, func(path string, size int64) error {
		d.files++
		d.total += size
		return nil
	})
	if err != nil {
		return nil, err
	}
	if d.files == 0 {
		return nil, stream.Errorf(root, 0, -1, "", stream.ErrEmpty, "directory holds no files")
	}
	return d, nil
}

// walkFiles calls fn for each regular file under dir in document order,
// hidden names (starting with ".") left out.
func walkFiles(ctx context.Context, dir string, fn func(path string, size int64) error) error {
	return stream.WalkFiles(ctx, dir, stream.Hidden, func(path string, info fs.FileInfo) error {
		return fn(path, info.Size())
	})
}

// DirPaths yields the path of each document of the directory root, as
// OpenDir reads them (document i is the i-th path), relative to root with
// forward slashes: the names by which a directory's documents are known.
func DirPaths(ctx context.Context, root string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		err := walkFiles(ctx, root, func(path string, _ int64) error {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			if !yield(filepath.ToSlash(rel), nil) {
				return errStopWalk
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStopWalk) {
			yield("", err)
		}
	}
}

// Info describes the directory: one document per file.
func (d *Dir) Info() stream.Info {
	return stream.Info{Path: d.root, Format: "text-dir", Layout: "text", Rows: d.files, NNZ: -1, Bytes: d.total}
}

// dirBatch is the files of one batch, starting at document start.
type dirBatch struct {
	start int64
	paths []string
	sizes []int64
}

// errStopWalk ends a walk whose consumer has gone.
var errStopWalk = errors.New("walk stopped")

// Texts reads the files once, o.Workers batches at a time, in document order.
func (d *Dir) Texts(ctx context.Context) iter.Seq2[*stream.Texts, error] {
	split := func(ctx context.Context, emit func(dirBatch) bool) error {
		var b dirBatch
		var n, bytes int64
		flush := func() bool {
			ok := emit(b)
			b = dirBatch{start: n}
			bytes = 0
			return ok
		}
		err := walkFiles(ctx, d.root, func(path string, size int64) error {
			b.paths, b.sizes = append(b.paths, path), append(b.sizes, size)
			n++
			bytes += size
			if len(b.paths) >= d.o.BatchRows || bytes >= batchBytes {
				if !flush() {
					return errStopWalk
				}
			}
			return nil
		})
		switch {
		case errors.Is(err, errStopWalk) || ctx.Err() != nil:
			return nil // Ordered reports a cancellation
		case err != nil:
			return err
		}
		if len(b.paths) > 0 && !flush() {
			return nil
		}
		if n != d.files {
			return stream.Errorf(d.root, 0, -1, "", stream.ErrCorrupt, "the directory changed since it was opened: %d files, now %d", d.files, n)
		}
		return nil
	}
	read := func(ctx context.Context, b dirBatch) (*stream.Texts, error) {
		out := &stream.Texts{Start: b.start, Text: make([]string, 0, len(b.paths))}
		for i, path := range b.paths {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			t, n, err := readDoc(path, b.start+int64(i), b.sizes[i])
			if err != nil {
				return nil, err
			}
			out.Text = append(out.Text, t)
			d.o.Progress.Add(1, n)
		}
		return out, nil
	}
	return stream.Ordered(ctx, d.o.Workers, split, read, nil)
}

// readDoc reads one whole file, of size bytes on disk, as document row; n is
// the number of bytes read from disk.
func readDoc(path string, row, size int64) (text string, n int64, err error) {
	r, err := openReader(path)
	if err != nil {
		return "", 0, err
	}
	defer r.Close()
	var sb strings.Builder
	sb.Grow(int(min(size, MaxDocBytes)))
	m, err := io.Copy(&sb, io.LimitReader(r, MaxDocBytes+1))
	if err != nil {
		if err == io.ErrUnexpectedEOF {
			return "", r.n.N, stream.Errorf(path, 0, row, "", stream.ErrCorrupt, "unexpected end of compressed data (truncated file?)")
		}
		return "", r.n.N, stream.Errorf(path, 0, row, "", stream.ErrCorrupt, "%v", err)
	}
	if m > MaxDocBytes {
		return "", r.n.N, stream.Errorf(path, 0, row, "", stream.ErrValue, "document longer than %d MB", MaxDocBytes>>20)
	}
	return valid(sb.String()), r.n.N, nil
}
