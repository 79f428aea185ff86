// Package objstore reads streamfit's inputs from object stores and writes
// its outputs there: gs:// (Google Cloud Storage) and s3:// (Amazon S3 and
// stores that speak its API) paths, for the Beam pipeline's workers.
//
// Importing the package registers both schemes with the streamfit readers
// (stream.RegisterFileSystem), so every input kind they read — Parquet
// and Arrow files by their row groups and record batches, docword and text
// files, vocabularies, dataset directories — is read from the store with
// ranged requests: a file is an io.ReaderAt over the object, with a
// bounded read-ahead (blocks of BlockSize, at most MaxBlocks held per open
// file), and a request that fails in a way that may pass (a 5xx or 429
// answer, a connection cut mid-body) is tried again from where it
// stopped. Every request of an open file asks for the object's generation
// (GCS) or ETag (S3) seen when it was opened, or the one Pin fixed, so an
// object rewritten during or between passes is an error (ErrChanged), not
// a mix of two files.
//
// Glob patterns are listed through Beam's filesystem registry (Expand),
// outputs are uploaded whole (Upload: the object appears complete or not
// at all). The clients are made on first use from the environment, as
// the stores' own tools do: GCS's application default credentials (or
// none, for public buckets; STORAGE_EMULATOR_HOST for an emulator), and
// AWS's default configuration chain (AWS_REGION, AWS_ENDPOINT_URL_S3 for
// another S3 service).
package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs" // gs:// globs
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"  // s3:// globs

	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/columnar"
)

// ErrChanged reports an object that is not the version its reader was
// opened on (or pinned to): it was rewritten after the pipeline was
// planned or during a pass.
var ErrChanged = errors.New("the object changed after it was first read")

const (
	// BlockSize is the span of one ranged request of small reads, and of
	// the read-ahead.
	BlockSize = 1 << 20
	// MaxBlocks bounds the blocks an open file holds (read and read
	// ahead): its memory is at most MaxBlocks × BlockSize.
	MaxBlocks = 8
	// attempts bounds the tries of one request.
	attempts = 5
)

// retryWait is the wait before the second try of a request, doubled for
// each try after it.
var retryWait = 100 * time.Millisecond

// Schemes are the schemes the package serves.
var Schemes = []string{"gs", "s3"}

// stores are the file systems of Schemes.
var stores = map[string]*store{"gs": {scheme: "gs", connect: newGCS}, "s3": {scheme: "s3", connect: newS3}}

func init() {
	for _, s := range Schemes {
		stream.RegisterFileSystem(s, stores[s])
	}
}

// Remote reports whether path is on an object store the package serves.
func Remote(path string) bool { return slices.Contains(Schemes, stream.Scheme(path)) }

// info describes an object (or a directory: a prefix of objects).
type info struct {
	name    string // the base name
	size    int64
	mod     time.Time
	version string // the generation (GCS) or ETag (S3)
	dir     bool
}

func (i info) Name() string       { return i.name }
func (i info) Size() int64        { return i.size }
func (i info) ModTime() time.Time { return i.mod }
func (i info) IsDir() bool        { return i.dir }
func (i info) Sys() any           { return i.version }
func (i info) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}

// backend is the client of one kind of store; bucket and key name an
// object. Errors wrap fs.ErrNotExist for a missing object and ErrChanged
// for a version mismatch.
type backend interface {
	// stat describes the object.
	stat(ctx context.Context, bucket, key string) (info, error)
	// list returns the directories (sub-prefixes) and objects directly
	// under prefix (a key ending with "/", or "" for the bucket).
	list(ctx context.Context, bucket, prefix string) (dirs []string, files []info, err error)
	// read returns bytes [off, off+n) of the object, which must be of
	// version.
	read(ctx context.Context, bucket, key, version string, off, n int64) (io.ReadCloser, error)
	// upload writes the object from r (size bytes) in one upload.
	upload(ctx context.Context, bucket, key string, r io.ReadSeeker, size int64) error
	// remove deletes the object.
	remove(ctx context.Context, bucket, key string) error
	// status is the HTTP status of a failed request, 0 if none.
	status(err error) int
}

// store is the stream.FileSystem of one scheme.
type store struct {
	scheme  string
	connect func(ctx context.Context) (backend, error)

	once sync.Once
	b    backend
	err  error
}

// backend returns the store's client, made on first use.
func (s *store) backend() (backend, error) {
	s.once.Do(func() { s.b, s.err = s.connect(context.Background()) })
	return s.b, s.err
}

// split parses scheme://bucket/key.
func split(p string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(p, stream.Scheme(p)+"://")
	bucket, key, _ = strings.Cut(rest, "/")
	if !ok || bucket == "" {
		return "", "", fmt.Errorf("%s: not a bucket/object path", p)
	}
	return bucket, key, nil
}

func (s *store) Stat(p string) (fs.FileInfo, error) {
	b, err := s.backend()
	if err != nil {
		return nil, err
	}
	bucket, key, err := split(p)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	if key != "" && !strings.HasSuffix(key, "/") {
		in, err := s.retry(ctx, p, func() (info, error) { return b.stat(ctx, bucket, key) })
		if !errors.Is(err, fs.ErrNotExist) {
			in.name = path.Base(key)
			return in, err
		}
	}
	// A directory: a prefix with objects below it.
	prefix := strings.TrimSuffix(key, "/") + "/"
	if key == "" {
		prefix = ""
	}
	dirs, files, err := b.list(ctx, bucket, prefix)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	if len(dirs) == 0 && len(files) == 0 {
		return nil, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
	}
	return info{name: path.Base(strings.TrimSuffix(key, "/")), dir: true}, nil
}

func (s *store) ReadDir(p string) ([]fs.DirEntry, error) {
	b, err := s.backend()
	if err != nil {
		return nil, err
	}
	bucket, key, err := split(p)
	if err != nil {
		return nil, err
	}
	prefix := strings.TrimSuffix(key, "/") + "/"
	if key == "" {
		prefix = ""
	}
	dirs, files, err := b.list(context.Background(), bucket, prefix)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: p, Err: err}
	}
	var entries []fs.DirEntry
	for _, d := range dirs {
		entries = append(entries, fs.FileInfoToDirEntry(info{name: path.Base(d), dir: true}))
	}
	for _, f := range files {
		if f.name != "" { // not the placeholder object of the directory itself
			entries = append(entries, fs.FileInfoToDirEntry(f))
		}
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

func (s *store) Open(p string) (stream.File, error) {
	b, err := s.backend()
	if err != nil {
		return nil, err
	}
	bucket, key, err := split(p)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	in, err := s.retry(ctx, p, func() (info, error) { return b.stat(ctx, bucket, key) })
	if err != nil {
		cancel()
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	in.name = path.Base(key)
	if v, ok := pins.Load(p); ok && v.(string) != in.version {
		cancel()
		return nil, fmt.Errorf("%s: %w: version %s, planned on %s", p, ErrChanged, in.version, v)
	}
	return &file{s: s, b: b, ctx: ctx, cancel: cancel, path: p, bucket: bucket, key: key, info: in}, nil
}

// retry calls op until it succeeds, fails for good (permanent), or has
// been tried attempts times.
func (s *store) retry(ctx context.Context, p string, op func() (info, error)) (info, error) {
	var in info
	var err error
	for try := range attempts {
		if try > 0 && !s.wait(ctx, try) {
			break
		}
		if in, err = op(); err == nil || s.permanent(err) {
			return in, err
		}
		counters.retries.Add(1)
	}
	return in, err
}

// permanent reports an error that another try would not mend: a missing or
// changed object, a request refused (4xx other than 408 and 429), the end
// of the caller's context.
func (s *store) permanent(err error) bool {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrChanged) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	code := s.b.status(err)
	return code >= 400 && code < 500 && code != 408 && code != 429
}

// wait sleeps before try number try (from 1), doubling each time; false
// when ctx ended first.
func (s *store) wait(ctx context.Context, try int) bool {
	t := time.NewTimer(retryWait << (try - 1))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// pins are the versions of objects fixed by Pin.
var pins sync.Map

// Pin fixes the version of the object at path (a generation or ETag, as
// Version returns) that this process may read: opening it when it holds
// another is an error wrapping ErrChanged. The pipeline pins each input to
// the version it was planned on, so an object rewritten between two passes
// is refused on every worker.
func Pin(path, version string) {
	if version != "" {
		pins.Store(path, version)
	}
}

// Version returns the generation (GCS) or ETag (S3) of the object at path,
// "" for a local path.
func Version(path string) (string, error) {
	if !Remote(path) {
		return "", nil
	}
	st, err := stream.StatFile(path)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		return "", nil
	}
	v, _ := st.Sys().(string)
	return v, nil
}

// Counters are the requests of the package's reads, since the process
// started: ranged requests, bytes they returned and tries again.
type Counters struct {
	Requests, Bytes, Retries int64
}

var counters struct{ requests, bytes, retries atomic.Int64 }

// Count returns the counters.
func Count() Counters {
	return Counters{counters.requests.Load(), counters.bytes.Load(), counters.retries.Load()}
}

// file is an open object: a stream.File over ranged requests.
type file struct {
	s           *store
	b           backend
	ctx         context.Context
	cancel      context.CancelFunc
	path        string
	bucket, key string
	info        info

	mu     sync.Mutex
	blocks []*block // at most MaxBlocks, by last use
	tick   uint64
	pos    int64 // of Read and Seek
}

// block is bytes [idx·BlockSize, …) of the object, fetched once.
type block struct {
	idx  int64
	data []byte
	err  error
	done chan struct{} // closed when data or err is set
	used uint64
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }

func (f *file) Close() error {
	f.cancel()
	return nil
}

func (f *file) Read(p []byte) (int, error) {
	f.mu.Lock()
	pos := f.pos
	f.mu.Unlock()
	n, err := f.ReadAt(p, pos)
	f.mu.Lock()
	f.pos = pos + int64(n)
	f.mu.Unlock()
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *file) Seek(off int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch whence {
	case io.SeekCurrent:
		off += f.pos
	case io.SeekEnd:
		off += f.info.size
	}
	if off < 0 {
		return f.pos, fmt.Errorf("%s: seek to %d", f.path, off)
	}
	f.pos = off
	return off, nil
}

// ReadAt reads len(p) bytes at off: a read of a block or more with one
// ranged request of its own, a smaller one from the block that holds it,
// fetched (with the next block, read ahead) when not held.
func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: read at %d", f.path, off)
	}
	want := len(p)
	if rest := f.info.size - off; int64(len(p)) > rest {
		p = p[:max(rest, 0)]
	}
	n := 0
	for n < len(p) {
		at := off + int64(n)
		if len(p)-n >= BlockSize {
			if err := f.fetch(p[n:], at); err != nil {
				return n, err
			}
			n = len(p)
			break
		}
		b := f.block(at / BlockSize)
		select {
		case <-b.done:
		case <-f.ctx.Done():
			return n, fmt.Errorf("%s: %w", f.path, fs.ErrClosed)
		}
		if b.err != nil {
			return n, b.err
		}
		n += copy(p[n:], b.data[at-b.idx*BlockSize:])
	}
	if n < want {
		return n, io.EOF
	}
	return n, nil
}

// block returns block i, fetching it (and the one after it) if not held.
func (f *file) block(i int64) *block {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.blockLocked(i)
	if (i+1)*BlockSize < f.info.size {
		f.blockLocked(i + 1) // read ahead
	}
	return b
}

// blockLocked returns block i, starting its fetch if not held; it evicts
// the least recently used block beyond MaxBlocks (a reader still waiting
// on it keeps its own reference). f.mu is held.
func (f *file) blockLocked(i int64) *block {
	f.tick++
	for _, b := range f.blocks {
		if b.idx == i {
			b.used = f.tick
			return b
		}
	}
	if len(f.blocks) >= MaxBlocks {
		lru := 0
		for j, b := range f.blocks {
			if b.used < f.blocks[lru].used {
				lru = j
			}
		}
		f.blocks = slices.Delete(f.blocks, lru, lru+1)
	}
	b := &block{idx: i, done: make(chan struct{}), used: f.tick}
	f.blocks = append(f.blocks, b)
	go func() {
		start := i * BlockSize
		buf := make([]byte, min(BlockSize, f.info.size-start))
		if err := f.fetch(buf, start); err != nil {
			b.err = err
		} else {
			b.data = buf
		}
		close(b.done)
	}()
	return b
}

// fetch fills dst with the bytes at off, in one ranged request, tried
// again from where it stopped when it fails in a way that may pass.
func (f *file) fetch(dst []byte, off int64) error {
	got := 0
	var err error
	for try := range attempts {
		if try > 0 {
			counters.retries.Add(1)
			if !f.s.wait(f.ctx, try) {
				break
			}
		}
		var rc io.ReadCloser
		counters.requests.Add(1)
		rc, err = f.b.read(f.ctx, f.bucket, f.key, f.info.version, off+int64(got), int64(len(dst)-got))
		if err == nil {
			var n int
			n, err = io.ReadFull(rc, dst[got:])
			rc.Close()
			got += n
			counters.bytes.Add(int64(n))
			if err == nil {
				return nil
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // the body ended early: the rest is asked for again
			}
		}
		if f.s.permanent(err) {
			break
		}
	}
	if errors.Is(err, ErrChanged) {
		return fmt.Errorf("%s: %w (read at version %s)", f.path, ErrChanged, f.info.version)
	}
	return fmt.Errorf("%s: bytes %d:%d: %w", f.path, off, off+int64(len(dst)), err)
}

// Expand returns the files an argument names on an object store: a glob
// pattern's matches listed by Beam's filesystem registry (sorted), a
// dataset directory's files in the order a dataset input reads them, or
// the object itself. A pattern that matches nothing is an error.
func Expand(ctx context.Context, arg string) ([]string, error) {
	if strings.ContainsAny(arg, "*?[") {
		fsys, err := filesystem.New(ctx, arg)
		if err != nil {
			return nil, err
		}
		defer fsys.Close()
		m, err := fsys.List(ctx, arg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", arg, err)
		}
		m = slices.DeleteFunc(m, func(p string) bool { return strings.HasSuffix(p, "/") })
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: no object matches", arg)
		}
		slices.Sort(m)
		return m, nil
	}
	if st, err := stream.StatFile(arg); err == nil && st.IsDir() {
		return columnar.DatasetFiles(arg)
	}
	return []string{arg}, nil
}

// Upload writes the local file at local to the object at remote, in one
// upload: the object appears whole when it ends, or not at all (a store
// keeps the object before it until then).
func Upload(ctx context.Context, local stream.File, remote string) error {
	s, bucket, key, err := remoteStore(remote)
	if err != nil {
		return err
	}
	st, err := local.Stat()
	if err != nil {
		return err
	}
	if _, err := local.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := s.b.upload(ctx, bucket, key, local, st.Size()); err != nil {
		return fmt.Errorf("%s: %w", remote, err)
	}
	return nil
}

// Remove deletes the object at remote.
func Remove(ctx context.Context, remote string) error {
	s, bucket, key, err := remoteStore(remote)
	if err != nil {
		return err
	}
	return s.b.remove(ctx, bucket, key)
}

// remoteStore returns the store of a remote path, connected, and the
// object's bucket and key.
func remoteStore(p string) (*store, string, string, error) {
	if !Remote(p) {
		return nil, "", "", fmt.Errorf("%s: not a gs:// or s3:// path", p)
	}
	s := stores[stream.Scheme(p)]
	if _, err := s.backend(); err != nil {
		return nil, "", "", err
	}
	bucket, key, err := split(p)
	if err == nil && (key == "" || strings.HasSuffix(key, "/")) {
		err = fmt.Errorf("%s: names no object", p)
	}
	return s, bucket, key, err
}
