package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strconv"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
)

// gcs is the backend of gs:// paths.
type gcs struct{ c *storage.Client }

// httpClient, when set (by tests), carries the clients' requests.
var httpClient *http.Client

// newGCS connects with the application default credentials, or without
// any (public buckets) when there are none; STORAGE_EMULATOR_HOST points
// the client at an emulator. Reads go through the JSON API, whose ranged
// reads honour the generation condition on GCS and its emulators alike.
func newGCS(ctx context.Context) (backend, error) {
	opts := []option.ClientOption{storage.WithJSONReads()}
	if httpClient != nil {
		opts = append(opts, option.WithHTTPClient(httpClient))
	}
	c, err := storage.NewClient(ctx, opts...)
	if err != nil && httpClient == nil {
		c, err = storage.NewClient(ctx, append(opts, option.WithoutAuthentication())...)
	}
	if err != nil {
		return nil, fmt.Errorf("gs: %w", err)
	}
	return gcs{c}, nil
}

func (g gcs) stat(ctx context.Context, bucket, key string) (info, error) {
	a, err := g.c.Bucket(bucket).Object(key).Attrs(ctx)
	if errors.Is(err, storage.ErrObjectNotExist) || errors.Is(err, storage.ErrBucketNotExist) {
		return info{}, fmt.Errorf("%w: %v", fs.ErrNotExist, err)
	}
	if err != nil {
		return info{}, err
	}
	return info{name: path.Base(a.Name), size: a.Size, mod: a.Updated.UTC(), version: strconv.FormatInt(a.Generation, 10)}, nil
}

func (g gcs) list(ctx context.Context, bucket, prefix string) ([]string, []info, error) {
	it := g.c.Bucket(bucket).Objects(ctx, &storage.Query{Prefix: prefix, Delimiter: "/"})
	var dirs []string
	var files []info
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return dirs, files, nil
		}
		if err != nil {
			return nil, nil, err
		}
		switch {
		case a.Prefix != "":
			dirs = append(dirs, a.Prefix[:len(a.Prefix)-1])
		case a.Name == prefix:
			// The directory's placeholder object.
		default:
			files = append(files, info{name: path.Base(a.Name), size: a.Size, mod: a.Updated.UTC(), version: strconv.FormatInt(a.Generation, 10)})
		}
	}
}

func (g gcs) read(ctx context.Context, bucket, key, version string, off, n int64) (io.ReadCloser, error) {
	o := g.c.Bucket(bucket).Object(key)
	gen, err := strconv.ParseInt(version, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("generation %q: %w", version, err)
	}
	r, err := o.If(storage.Conditions{GenerationMatch: gen}).NewRangeReader(ctx, off, n)
	if g.status(err) == http.StatusPreconditionFailed {
		return nil, fmt.Errorf("%w: %v", ErrChanged, err)
	}
	if err != nil {
		return nil, err
	}
	if r.Attrs.Generation != gen {
		r.Close()
		return nil, fmt.Errorf("%w: generation %d", ErrChanged, r.Attrs.Generation)
	}
	return r, nil
}

func (g gcs) upload(ctx context.Context, bucket, key string, r io.ReadSeeker, _ int64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // a failed upload is abandoned, and no object is made
	w := g.c.Bucket(bucket).Object(key).NewWriter(ctx)
	if _, err := io.Copy(w, r); err != nil {
		cancel()
		w.Close()
		return err
	}
	return w.Close()
}

func (g gcs) remove(ctx context.Context, bucket, key string) error {
	return g.c.Bucket(bucket).Object(key).Delete(ctx)
}

func (gcs) status(err error) int {
	var e *googleapi.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}
