package text

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

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
// Files are taken depth first, each directory's entries sorted by name (the
// order of filepath.WalkDir), so document i is the same file on every pass.
// Names starting with "." (.git, .DS_Store, editor backups) are skipped;
// symbolic links to regular files are followed, links to directories are not.
// Each file may be plain, gzip or zstd compressed, up to MaxDocBytes after
// decompression; an empty file is an empty document. A file of binary data
// (a NUL byte after decompression: an image, an archive, an object file) is
// passed over as grep and ripgrep pass over them: read as an empty document,
// so that document i is still the i-th file, and counted in one warning
// (Options.Warn) naming a few of them, after the first pass that met them.
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
	// binary counts the files of a pass that hold binary data (a NUL
	// byte), read as empty documents; names keeps the first few, and
	// warned says the warning was given (once per source, not per pass).
	mu     sync.Mutex
	binary int64
	names  []binaryFile
	warned bool
	// tree is the fingerprint of the tree when it was opened (stampTree),
	// which every pass's walk must find again.
	tree hash.Hash64
}

// binaryNamed is how many binary files a warning names: the first ones.
const binaryNamed = 3

// binaryFile is a binary file met by a pass: its document index and name.
type binaryFile struct {
	row  int64
	name string
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
	d := &Dir{root: root, o: o.WithDefaults(), tree: fnv.New64a()}
	err = walkFiles(context.Background(), root, func(path string, info fs.FileInfo) error {
		d.files++
		d.total += info.Size()
		stampTree(d.tree, path, info)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if d.files == 0 {
		return nil, stream.Errorf(root, 0, -1, "", stream.ErrEmpty, "holds no data files (names starting with . are left out)")
	}
	return d, nil
}

// walkFiles calls fn for each regular file under dir in document order,
// hidden names (starting with ".") left out.
func walkFiles(ctx context.Context, dir string, fn func(path string, info fs.FileInfo) error) error {
	return stream.WalkFiles(ctx, dir, stream.Hidden, fn)
}

// stampTree adds a file's path, size and modification time to the
// fingerprint of a tree: a file added, removed, resized or rewritten
// changes it.
func stampTree(h hash.Hash64, path string, info fs.FileInfo) {
	fmt.Fprintf(h, "%s\x00%d\x00%d\n", path, info.Size(), info.ModTime().UnixNano())
}

// DirPaths yields the path of each document of the directory root, as
// OpenDir reads them (document i is the i-th path), relative to root with
// forward slashes: the names by which a directory's documents are known.
func DirPaths(ctx context.Context, root string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		err := walkFiles(ctx, root, func(path string, _ fs.FileInfo) error {
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
		tree := fnv.New64a()
		err := walkFiles(ctx, d.root, func(path string, info fs.FileInfo) error {
			size := info.Size()
			stampTree(tree, path, info)
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
		// The last batch waits for the check that the tree is the one
		// opened.
		if n != d.files {
			return stream.Errorf(d.root, 0, -1, "", stream.ErrChanged, "the directory changed since it was opened: %d files, now %d", d.files, n)
		}
		if tree.Sum64() != d.tree.Sum64() {
			return stream.Errorf(d.root, 0, -1, "", stream.ErrChanged, "the directory changed since it was opened: a file under it was resized, rewritten or replaced")
		}
		if len(b.paths) > 0 && !flush() {
			return nil
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
			if errors.Is(err, errBinary) {
				d.skipped(b.start+int64(i), path)
				t, err = "", nil
			}
			if err != nil {
				return nil, err
			}
			out.Text = append(out.Text, t)
			d.o.Progress.Add(1, n)
		}
		return out, nil
	}
	return func(yield func(*stream.Texts, error) bool) {
		d.mu.Lock()
		d.binary, d.names = 0, nil
		d.mu.Unlock()
		for b, err := range stream.Ordered(ctx, d.o.Workers, split, read, nil) {
			if !yield(b, err) || err != nil {
				return
			}
		}
		d.warn()
	}
}

// skipped counts a binary file of the pass, document row.
func (d *Dir) skipped(row int64, path string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.binary++
	rel, err := filepath.Rel(d.root, path)
	if err != nil {
		rel = path
	}
	// The workers meet them in any order: the first ones are named.
	d.names = append(d.names, binaryFile{row, filepath.ToSlash(rel)})
	slices.SortFunc(d.names, func(a, b binaryFile) int { return cmp.Compare(a.row, b.row) })
	d.names = d.names[:min(len(d.names), binaryNamed)]
}

// warn tells o.Warn, after the first pass that met some, of the binary
// files read as empty documents, naming a few, as grep and ripgrep pass
// over binary files in a directory they search.
func (d *Dir) warn() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.binary == 0 || d.warned {
		return
	}
	d.warned = true
	var names []string
	for _, f := range d.names {
		names = append(names, f.name)
	}
	if d.binary > int64(len(names)) {
		names[len(names)-1] += fmt.Sprintf(" and %d more", d.binary-int64(len(names)))
	}
	d.o.Warnf("%s: %d binary files (with NUL bytes) read as empty documents: %s", d.root, d.binary, strings.Join(names, ", "))
}

// errBinary: a file of a directory holds binary data, not text.
var errBinary = errors.New("binary data (a NUL byte), not text")

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
	if !r.compressed && r.n.N != size {
		return "", r.n.N, stream.Errorf(path, 0, row, "", stream.ErrChanged, "the file changed while streamfit read it: %d bytes, %d when the pass began", r.n.N, size)
	}
	if strings.IndexByte(sb.String(), 0) >= 0 {
		return "", r.n.N, errBinary
	}
	return valid(strings.TrimPrefix(sb.String(), bom)), r.n.N, nil
}
