package beamfit

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/streamfit/streamfit/cmd/streamfit-beam/objstore"
	"github.com/streamfit/streamfit/cmd/streamfit-beam/objstore/objstoretest"
	"github.com/streamfit/streamfit/models/lda"
	"github.com/streamfit/streamfit/stream"
	"github.com/streamfit/streamfit/stream/synth"
)

var (
	fakesOnce sync.Once
	fakesErr  error
)

// startFakes serves the fake GCS and S3 (objstoretest) for the rest of the
// test binary, before the first client is made.
func startFakes(t *testing.T) {
	t.Helper()
	fakesOnce.Do(func() { _, fakesErr = objstoretest.Start() })
	if fakesErr != nil {
		t.Fatal(fakesErr)
	}
}

// putFile uploads the local file to the object remote.
func putFile(t *testing.T, local, remote string) {
	t.Helper()
	if err := upload(context.Background(), local, remote); err != nil {
		t.Fatal(err)
	}
}

// getFile returns the bytes of the object remote.
func getFile(t *testing.T, remote string) []byte {
	t.Helper()
	f, err := stream.OpenFile(remote)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestObjectStoreInputs runs the default LDA fit (EM passes included) on
// prism over a corpus of four Parquet files of several row groups on the
// fake GCS (a glob) and on the fake S3 (a dataset directory with a
// partition subdirectory), writing the model and the phase-2 statistics to
// the store, and checks that the model is byte-identical to `streamfit
// fit` over one local file of the same documents, and the statistics to
// those of the same pipeline over the local parts. An input rewritten
// after the pipeline was planned fails its units.
func TestObjectStoreInputs(t *testing.T) {
	startFakes(t)
	dir := t.TempDir()
	fs := corpus(t, dir, synth.LDAConfig{Docs: 2000, Vocab: 300, K: 5, Alpha0: 1, DocLen: 30, Seed: 11}, 250, parquetParts(500, 250, 750, 500))
	gsDir := "gs://" + objstoretest.Bucket + "/lda"
	s3Dir := "s3://" + objstoretest.Bucket + "/lda-set"
	for i, f := range fs {
		putFile(t, f, gsDir+"/"+filepath.Base(f))
		sub := ""
		if i >= 2 {
			sub = "day=2/" // a partition subdirectory, read after the files before it by name
		}
		putFile(t, f, s3Dir+"/"+sub+filepath.Base(f))
	}
	s, common := settings(5, 3, 0)
	s.EMPasses, s.EMTol, s.EMAlpha = 10, lda.DefaultEMTol, true
	want := filepath.Join(dir, "fit.json")
	run(t, append([]string{"fit", "lda", "--input", filepath.Join(dir, "all.parquet"), "--no-timing", "--out", want}, common...)...)
	localStats := filepath.Join(dir, "local.stats")
	if err := pipeline(t, fs, Options{Fit: s, Out: Output{Model: filepath.Join(dir, "local.json"), Stats: localStats, NoTiming: true}}); err != nil {
		t.Fatal(err)
	}
	for _, in := range []struct{ name, arg, out string }{
		{"gs glob", gsDir + "/part-*.parquet", gsDir + "/out"},
		{"s3 dataset", s3Dir, "s3://" + objstoretest.Bucket + "/out"},
	} {
		t.Run(in.name, func(t *testing.T) {
			files, err := Expand([]string{in.arg})
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != len(fs) {
				t.Fatalf("%s names %q, want %d files", in.arg, files, len(fs))
			}
			before := objstore.Count()
			out := Output{Model: in.out + "/model.json", Stats: in.out + "/p2.stats", NoTiming: true}
			if err := pipeline(t, files, Options{Fit: s, Out: out}); err != nil {
				t.Fatal(err)
			}
			c := objstore.Count()
			if got := getFile(t, out.Model); !bytes.Equal(got, readFile(t, want)) {
				t.Errorf("model.json from %s differs from streamfit fit on the local union", in.arg)
			}
			got := filepath.Join(t.TempDir(), "p2.stats")
			if err := os.WriteFile(got, getFile(t, out.Stats), 0o644); err != nil {
				t.Fatal(err)
			}
			if !sameSums(t, got, localStats) {
				t.Errorf("the phase-2 statistics from %s differ from those of the local parts", in.arg)
			}
			t.Logf("%d ranged requests, %d kB", c.Requests-before.Requests, (c.Bytes-before.Bytes)>>10)
		})
	}

	t.Run("rewritten after planning", func(t *testing.T) {
		files, err := Expand([]string{gsDir + "/part-*.parquet"})
		if err != nil {
			t.Fatal(err)
		}
		units, err := Plan(context.Background(), files, stream.Options{})
		if err != nil {
			t.Fatal(err)
		}
		putFile(t, fs[0], files[0]) // the same bytes, a new generation
		o := Options{Units: units, Read: stream.Options{BatchRows: readRows, Workers: 2}, Fit: s, Out: Output{Model: filepath.Join(t.TempDir(), "m.json")}}
		o.Fit.EMPasses = 0
		p, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		_, err = beam.Run(context.Background(), "prism", p)
		// The runner passes the worker's error on as text.
		if err == nil || !strings.Contains(err.Error(), objstore.ErrChanged.Error()) {
			t.Errorf("a unit of an object rewritten after planning: %v, want %v", err, objstore.ErrChanged)
		}
	})
}

// TestObjectStoreFormats reads the other input kinds from the fake S3 and
// GCS — an Arrow IPC file (a unit per record batch), an Arrow IPC stream
// and a gzipped docword file (a unit each) —
// and checks the merged phase-1 statistics against the pipeline's over the
// same local files.
func TestObjectStoreFormats(t *testing.T) {
	startFakes(t)
	dir := t.TempDir()
	files := corpus(t, dir, small, 100, []part{{"b.arrow", 500}, {"c.arrows", 500}, {"docword.d.txt.gz", 500}})
	var remote []string
	for i, f := range files {
		root := []string{"s3://", "gs://"}[i%2] + objstoretest.Bucket + "/formats/"
		putFile(t, f, root+filepath.Base(f))
		remote = append(remote, root+filepath.Base(f))
	}
	s, _ := settings(4, 1, 0)
	want, got := filepath.Join(dir, "local.stats"), filepath.Join(dir, "remote.stats")
	if err := pipeline(t, files, Options{Fit: s, StatsOnly: 1, Out: Output{Stats: want}}); err != nil {
		t.Fatal(err)
	}
	if err := pipeline(t, remote, Options{Fit: s, StatsOnly: 1, Out: Output{Stats: got}}); err != nil {
		t.Fatal(err)
	}
	if !sameSums(t, got, want) {
		t.Error("phase-1 statistics of the Arrow and docword objects differ from those of the local files")
	}

}
