package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// s3Store is the backend of s3:// paths.
type s3Store struct{ c *s3.Client }

// newS3 connects with AWS's default configuration chain (the environment,
// shared files, the instance's role); AWS_ENDPOINT_URL_S3 names another
// S3 service. Checksums are sent and checked only where S3 requires them,
// as stores that speak the S3 API without the newer checksum headers
// expect; ranged reads carry none anyway.
func newS3(ctx context.Context) (backend, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("s3: %w", err)
	}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		if httpClient != nil {
			o.HTTPClient = httpClient
		}
	})
	return s3Store{c}, nil
}

func (s s3Store) stat(ctx context.Context, bucket, key string) (info, error) {
	out, err := s.c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if code := s.status(err); code == http.StatusNotFound {
		return info{}, fmt.Errorf("%w: %v", fs.ErrNotExist, err)
	}
	if err != nil {
		return info{}, err
	}
	return info{name: path.Base(key), size: aws.ToInt64(out.ContentLength), mod: aws.ToTime(out.LastModified).UTC(), version: aws.ToString(out.ETag)}, nil
}

func (s s3Store) list(ctx context.Context, bucket, prefix string) ([]string, []info, error) {
	var dirs []string
	var files []info
	p := s3.NewListObjectsV2Paginator(s.c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix), Delimiter: aws.String("/")})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, nil, err
		}
		for _, d := range page.CommonPrefixes {
			dirs = append(dirs, strings.TrimSuffix(aws.ToString(d.Prefix), "/"))
		}
		for _, o := range page.Contents {
			if k := aws.ToString(o.Key); k != prefix {
				files = append(files, info{name: path.Base(k), size: aws.ToInt64(o.Size), mod: aws.ToTime(o.LastModified).UTC(), version: aws.ToString(o.ETag)})
			}
		}
	}
	return dirs, files, nil
}

func (s s3Store) read(ctx context.Context, bucket, key, version string, off, n int64) (io.ReadCloser, error) {
	out, err := s.c.GetObject(ctx, &s3.GetObjectInput{
		Bucket:  aws.String(bucket),
		Key:     aws.String(key),
		Range:   aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1)),
		IfMatch: aws.String(version),
	})
	if s.status(err) == http.StatusPreconditionFailed {
		return nil, fmt.Errorf("%w: %v", ErrChanged, err)
	}
	if err != nil {
		return nil, err
	}
	if etag := aws.ToString(out.ETag); etag != version {
		out.Body.Close()
		return nil, fmt.Errorf("%w: ETag %s", ErrChanged, etag)
	}
	return out.Body, nil
}

func (s s3Store) upload(ctx context.Context, bucket, key string, r io.ReadSeeker, size int64) error {
	// One PUT: S3 makes the object visible whole when it completes (up to
	// 5 GB, far above a model or statistics file).
	_, err := s.c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: r, ContentLength: aws.Int64(size)})
	return err
}

func (s s3Store) remove(ctx context.Context, bucket, key string) error {
	_, err := s.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	return err
}

func (s3Store) status(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	var nf *types.NotFound
	var nk *types.NoSuchKey
	if errors.As(err, &nf) || errors.As(err, &nk) {
		return http.StatusNotFound
	}
	return 0
}
