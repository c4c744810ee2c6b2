// Package s3bucket keeps the usage archive's objects (CONTRACT §20) in an
// S3-compatible bucket through the AWS SDK, path-style, since most
// S3-compatible servers (MinIO, Ceph, R2) serve a bucket at an endpoint.
// Objects are whole: an archive part is bounded by its row count.
package s3bucket

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// ErrNotFound is a key the bucket does not hold.
var ErrNotFound = errors.New("no such object")

// Options are a bucket's settings.
type Options struct {
	Endpoint, Region, Bucket, AccessKeyID, SecretAccessKey string
	// Client is the HTTP client (nil: the SDK's).
	Client *http.Client
}

// Bucket is one bucket of an S3-compatible store.
type Bucket struct {
	c      *s3.Client
	bucket string
}

// New returns the bucket. Checksums are only those the API requires: many
// S3-compatible servers refuse the streaming trailers the SDK would add.
func New(o Options) *Bucket {
	region := o.Region
	if region == "" {
		region = "us-east-1"
	}
	cfg := aws.Config{Region: region,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired}
	if o.AccessKeyID != "" {
		cfg.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: o.AccessKeyID, SecretAccessKey: o.SecretAccessKey, Source: "turnpike archive"}, nil
		})
	}
	if o.Client != nil {
		cfg.HTTPClient = o.Client
	}
	c := s3.NewFromConfig(cfg, func(opt *s3.Options) {
		if o.Endpoint != "" {
			opt.BaseEndpoint = aws.String(o.Endpoint)
		}
		opt.UsePathStyle = true
	})
	return &Bucket{c: c, bucket: o.Bucket}
}

// Put stores body under key, replacing any object there.
func (b *Bucket) Put(ctx context.Context, key string, body []byte) error {
	_, err := b.c.PutObject(ctx, &s3.PutObjectInput{Bucket: &b.bucket, Key: &key, Body: bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body)))})
	return err
}

// Get reads the object at key whole; ErrNotFound when there is none.
func (b *Bucket) Get(ctx context.Context, key string) ([]byte, error) {
	out, err := b.c.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.bucket, Key: &key})
	var missing *types.NoSuchKey
	if errors.As(err, &missing) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}
