package text

import (
	"context"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strings"

	"github.com/streamfit/streamfit/stream"
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
// Files are taken in the order filepath.WalkDir visits them (depth first, each
// directory's entries sorted by name), so document i is the same file on every
// pass. Names starting with "." (.git, .DS_Store, editor backups) are skipped;
// symbolic links to regular files are followed, links to directories are not.
// Each file may be plain, gzip or zstd compressed, up to MaxDocBytes after
// decompression; an empty file is an empty document. The list of files is made
// once by OpenDir and held in memory.
type Dir struct {
	root  string
	files []string
	sizes []int64
	total int64
	o     stream.Options
}

// OpenDir lists the files under root. An unreadable directory is an error, and
// so is a tree with no files (wrapping stream.ErrEmpty).
func OpenDir(root string, o stream.Options) (stream.TextSource, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, stream.Errorf(root, 0, -1, "", stream.ErrFormat, "not a directory (use format text-lines)")
	}
	d := &Dir{root: root, o: o.WithDefaults()}
	err = filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != root && strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			return nil
		}
		info, err := os.Stat(path) // follows links, unlike e.Info
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		d.files = append(d.files, path)
		d.sizes = append(d.sizes, info.Size())
		d.total += info.Size()
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(d.files) == 0 {
		return nil, stream.Errorf(root, 0, -1, "", stream.ErrEmpty, "directory holds no files")
	}
	return d, nil
}

// Info describes the directory: one document per file.
func (d *Dir) Info() stream.Info {
	return stream.Info{Path: d.root, Format: "text-dir", Layout: "text", Rows: int64(len(d.files)), NNZ: -1, Bytes: d.total}
}

// Files lists the files in document order (not a copy).
func (d *Dir) Files() []string { return d.files }

// Texts reads the files once, o.Workers files at a time, in document order.
func (d *Dir) Texts(ctx context.Context) iter.Seq2[*stream.Texts, error] {
	type span struct{ lo, hi int }
	split := func(ctx context.Context, emit func(span) bool) error {
		lo, bytes := 0, int64(0)
		for i, n := range d.sizes {
			bytes += n
			if i+1-lo >= d.o.BatchRows || bytes >= batchBytes || i+1 == len(d.sizes) {
				if !emit(span{lo, i + 1}) {
					return nil
				}
				lo, bytes = i+1, 0
			}
		}
		return nil
	}
	read := func(ctx context.Context, s span) (*stream.Texts, error) {
		b := &stream.Texts{Start: int64(s.lo), Text: make([]string, 0, s.hi-s.lo)}
		for i := s.lo; i < s.hi; i++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			t, n, err := readDoc(d.files[i], int64(i), d.sizes[i])
			if err != nil {
				return nil, err
			}
			b.Text = append(b.Text, t)
			d.o.Progress.Add(1, n)
		}
		return b, nil
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
			return "", r.n.n, stream.Errorf(path, 0, row, "", stream.ErrCorrupt, "unexpected end of compressed data (truncated file?)")
		}
		return "", r.n.n, stream.Errorf(path, 0, row, "", stream.ErrCorrupt, "%v", err)
	}
	if m > MaxDocBytes {
		return "", r.n.n, stream.Errorf(path, 0, row, "", stream.ErrValue, "document longer than %d MB", MaxDocBytes>>20)
	}
	return valid(sb.String()), r.n.n, nil
}
