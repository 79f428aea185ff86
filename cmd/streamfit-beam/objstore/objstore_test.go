package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamfit/streamfit/cmd/streamfit-beam/objstore/objstoretest"
	"github.com/streamfit/streamfit/stream"
)

// faults turns the spoiling of ranged reads on (flaky).
var (
	faults atomic.Bool
	flaky  = &objstoretest.Flaky{Next: http.DefaultTransport, Every: 4, On: faults.Load}
)

// TestMain serves the fake stores on loopback for the tests, through a
// transport that spoils every fourth ranged read while faults is set.
func TestMain(m *testing.M) {
	f, err := objstoretest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	httpClient = &http.Client{Transport: flaky}
	retryWait = time.Millisecond
	code := m.Run()
	f.Stop()
	os.Exit(code)
}

// put writes data to the object at remote through a local file.
func put(t *testing.T, remote string, data []byte) {
	t.Helper()
	local := filepath.Join(t.TempDir(), "up")
	if err := os.WriteFile(local, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(local)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Upload(context.Background(), f, remote); err != nil {
		t.Fatal(err)
	}
}

// stores are the roots of the tests' objects, one per store.
var roots = []string{"gs://" + objstoretest.Bucket, "s3://" + objstoretest.Bucket}

// TestReadsLikeBytes reads an object of 5.3 blocks at random offsets and
// lengths, in order and from positions Seek sets, and checks every byte
// against what was written, while every fourth ranged request fails (503
// or a body cut short: tried again by the package, or by GCS's client
// itself); the read-ahead holds at most MaxBlocks blocks.
func TestReadsLikeBytes(t *testing.T) {
	for _, root := range roots {
		t.Run(Schemes[slices.Index(roots, root)], func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			data := make([]byte, 5*BlockSize+BlockSize/3)
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			p := root + "/bytes/obj.bin"
			put(t, p, data)
			faults.Store(true)
			defer faults.Store(false)
			before, spoiled := Count(), flaky.Spoiled()
			f, err := stream.OpenFile(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			st, err := f.Stat()
			if err != nil || st.Size() != int64(len(data)) || st.IsDir() {
				t.Fatalf("Stat: %v, %v", st, err)
			}
			for range 200 {
				off := rng.Int64N(int64(len(data)))
				n := rng.IntN(64 << 10)
				if rng.IntN(20) == 0 {
					n = BlockSize + rng.IntN(BlockSize) // a read of its own
				}
				buf := make([]byte, n)
				got, err := f.ReadAt(buf, off)
				want := min(n, len(data)-int(off))
				if got != want || (err != nil) != (want < n) || !bytes.Equal(buf[:got], data[off:off+int64(got)]) {
					t.Fatalf("ReadAt(%d bytes at %d) = %d, %v; want %d bytes", n, off, got, err, want)
				}
			}
			if _, err := f.Seek(3*BlockSize-10, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			rest, err := io.ReadAll(f)
			if err != nil || !bytes.Equal(rest, data[3*BlockSize-10:]) {
				t.Fatalf("reading on from a Seek: %d bytes, %v", len(rest), err)
			}
			if n := len(f.(*file).blocks); n > MaxBlocks {
				t.Errorf("%d blocks held, at most %d", n, MaxBlocks)
			}
			c := Count()
			if flaky.Spoiled() == spoiled {
				t.Errorf("no request was spoiled (%d requests)", c.Requests-before.Requests)
			}
			if stream.Scheme(root) == "s3" && c.Retries == before.Retries {
				t.Errorf("no request tried again (%d requests)", c.Requests-before.Requests)
			}
			t.Logf("%d requests, %d MB, %d spoiled, %d tried again here", c.Requests-before.Requests, (c.Bytes-before.Bytes)>>20, flaky.Spoiled()-spoiled, c.Retries-before.Retries)
		})
	}
}

// TestChangedObject rewrites an object while a reader is open on it and
// after a version was pinned: both are ErrChanged, never the new bytes.
func TestChangedObject(t *testing.T) {
	for _, root := range roots {
		t.Run(stream.Scheme(root), func(t *testing.T) {
			p := root + "/changed/obj.bin"
			old := bytes.Repeat([]byte("a"), 3*BlockSize)
			put(t, p, old)
			v, err := Version(p)
			if err != nil || v == "" {
				t.Fatalf("Version: %q, %v", v, err)
			}
			f, err := stream.OpenFile(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.ReadAt(make([]byte, 10), 0); err != nil {
				t.Fatal(err)
			}
			put(t, p, bytes.Repeat([]byte("b"), 3*BlockSize))
			// Block 2 is not held yet: it is asked of the store.
			if _, err := f.ReadAt(make([]byte, 10), 2*BlockSize+5); !errors.Is(err, ErrChanged) {
				t.Errorf("reading a rewritten object: %v, want ErrChanged", err)
			}
			Pin(p, v)
			if _, err := stream.OpenFile(p); !errors.Is(err, ErrChanged) {
				t.Errorf("opening an object rewritten after its version was pinned: %v, want ErrChanged", err)
			}
		})
	}
}

// TestExpand lists globs through Beam's filesystem registry and dataset
// directories through ReadDir, in the order a dataset input reads them.
func TestExpand(t *testing.T) {
	for _, root := range roots {
		t.Run(stream.Scheme(root), func(t *testing.T) {
			d := root + "/set"
			for _, name := range []string{"part-1.parquet", "part-0.parquet", "b=2/part-2.parquet", "_SUCCESS", "a.parquet.crc"} {
				put(t, d+"/"+name, []byte("x"))
			}
			ctx := context.Background()
			got, err := Expand(ctx, d+"/part-*.parquet")
			if want := []string{d + "/part-0.parquet", d + "/part-1.parquet"}; err != nil || !slices.Equal(got, want) {
				t.Errorf("glob: %q, %v; want %q", got, err, want)
			}
			got, err = Expand(ctx, d)
			if want := []string{d + "/a.parquet.crc", d + "/b=2/part-2.parquet", d + "/part-0.parquet", d + "/part-1.parquet"}; err == nil || !strings.Contains(err.Error(), "a.parquet.crc") {
				t.Errorf("a dataset directory holding a file of no dataset format: %q, %v; want an error naming it (files %q)", got, err, want)
			}
			if err := Remove(ctx, d+"/a.parquet.crc"); err != nil {
				t.Fatal(err)
			}
			got, err = Expand(ctx, d)
			if want := []string{d + "/b=2/part-2.parquet", d + "/part-0.parquet", d + "/part-1.parquet"}; err != nil || !slices.Equal(got, want) {
				t.Errorf("dataset directory: %q, %v; want %q", got, err, want)
			}
			if _, err := Expand(ctx, d+"/none-*.parquet"); err == nil {
				t.Errorf("a glob that matches nothing: no error")
			}
			if got, err := Expand(ctx, d+"/part-0.parquet"); err != nil || !slices.Equal(got, []string{d + "/part-0.parquet"}) {
				t.Errorf("an object: %q, %v", got, err)
			}
		})
	}
}
