// Package objstoretest serves a fake Google Cloud Storage
// (github.com/fsouza/fake-gcs-server) and a fake S3
// (github.com/johannesboyne/gofakes3) on loopback, each speaking its
// store's HTTP API, for the tests of objstore and of the pipeline.
package objstoretest

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"

	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Bucket is the bucket Start makes in both stores.
const Bucket = "corpus"

// Fakes are the two servers.
type Fakes struct {
	GCS *fakestorage.Server
	S3  *httptest.Server
}

// Start starts both servers on 127.0.0.1, makes Bucket in each, and points
// the environment at them: STORAGE_EMULATOR_HOST for GCS's clients,
// AWS_ENDPOINT_URL_S3, a region and placeholder keys for S3's. A client
// reads the environment when it is made, so Start comes before the first
// one (in TestMain); processes started afterwards (workers) inherit it.
func Start() (*Fakes, error) {
	gcs, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", Writer: io.Discard})
	if err != nil {
		return nil, fmt.Errorf("fake GCS: %w", err)
	}
	gcs.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: Bucket})
	s3 := httptest.NewUnstartedServer(gofakes3.New(s3mem.New(), gofakes3.WithAutoBucket(true), gofakes3.WithLogger(gofakes3.DiscardLog())).Server())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		gcs.Stop()
		return nil, err
	}
	s3.Listener = l
	s3.Config.ErrorLog = log.New(io.Discard, "", 0) // its 412 answers log a second WriteHeader
	s3.Start()
	env := map[string]string{
		"STORAGE_EMULATOR_HOST":     strings.TrimPrefix(gcs.URL(), "http://"),
		"AWS_ENDPOINT_URL_S3":       s3.URL,
		"AWS_REGION":                "us-east-1",
		"AWS_ACCESS_KEY_ID":         "streamfit",
		"AWS_SECRET_ACCESS_KEY":     "streamfit",
		"AWS_EC2_METADATA_DISABLED": "true",
	}
	for k, v := range env {
		os.Setenv(k, v)
	}
	return &Fakes{GCS: gcs, S3: s3}, nil
}

// Stop stops both servers.
func (f *Fakes) Stop() {
	f.GCS.Stop()
	f.S3.Close()
}

// Flaky is an http.RoundTripper that spoils some ranged reads (GET
// requests with a Range header) while On is set: every Every-th one
// answers 503, and every Every-th one after that has its body cut after
// half its bytes, the two faults a reader must try again after.
type Flaky struct {
	Next  http.RoundTripper
	Every int
	On    func() bool

	n, spoiled atomic.Int64
}

// Spoiled returns the number of requests spoiled so far.
func (f *Flaky) Spoiled() int64 { return f.spoiled.Load() }

// RoundTrip sends req through Next, spoiling it as Flaky says.
func (f *Flaky) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.Header.Get("Range") == "" || !f.On() {
		return f.Next.RoundTrip(req)
	}
	switch f.n.Add(1) % int64(2*f.Every) {
	case 0:
		f.spoiled.Add(1)
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable", Header: http.Header{},
			Body: io.NopCloser(strings.NewReader("")), Request: req, ProtoMajor: 1, ProtoMinor: 1}, nil
	case int64(f.Every):
		resp, err := f.Next.RoundTrip(req)
		if err == nil && resp.ContentLength > 1 {
			f.spoiled.Add(1)
			resp.Body = cut{io.LimitReader(resp.Body, resp.ContentLength/2), resp.Body}
		}
		return resp, err
	}
	return f.Next.RoundTrip(req)
}

// cut is a body that ends with a broken connection.
type cut struct {
	r io.Reader
	c io.Closer
}

func (c cut) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (c cut) Close() error { return c.c.Close() }
