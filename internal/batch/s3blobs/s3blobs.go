// Package s3blobs keeps the bytes of files (internal/batch) in an
// S3-compatible bucket. It is the only place besides Bedrock that links the
// AWS SDK (internal/archtest).
package s3blobs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/turnpike-gw/turnpike/internal/batch"
)

// Options are the settings of an S3-compatible file store.
type Options struct {
	Endpoint, Bucket, AccessKey, SecretKey, Region string
	// Client is the HTTP client (nil: the default one).
	Client *http.Client
}

var _ batch.Blobs = (*Store)(nil)

// Store keeps file bytes as objects of one bucket of an S3-compatible
// store, one object per file named by its id. Uploads go in parts of
// s3PartSize, so neither an upload nor a download holds a whole file.
type Store struct {
	c      *s3.Client
	bucket string
}

// s3PartSize is one part of a multipart upload: S3 takes parts of 5 MiB or
// more, and a part is held in memory while it is sent.
const s3PartSize = 8 << 20

// New returns the store; path-style addressing, since most
// S3-compatible servers (MinIO, Ceph, R2) serve it at an endpoint.
func New(o Options) *Store {
	region := o.Region
	if region == "" {
		region = "us-east-1"
	}
	cfg := aws.Config{Region: region, Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: o.AccessKey, SecretAccessKey: o.SecretKey, Source: "turnpike files"}, nil
	}),
		// Checksums only where the API requires them: many S3-compatible
		// servers do not take the streaming trailers the SDK would add.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired}
	if o.Client != nil {
		cfg.HTTPClient = o.Client
	}
	c := s3.NewFromConfig(cfg, func(opt *s3.Options) {
		opt.BaseEndpoint = aws.String(o.Endpoint)
		opt.UsePathStyle = true
	})
	return &Store{c: c, bucket: o.Bucket}
}

func (b *Store) Put(ctx context.Context, id string, r io.Reader, max int64) (int64, error) {
	buf := make([]byte, s3PartSize)
	n, err := io.ReadFull(r, buf)
	total := int64(n)
	if total > max {
		return total, batch.ErrTooLarge
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		_, err := b.c.PutObject(ctx, &s3.PutObjectInput{Bucket: &b.bucket, Key: &id, Body: bytes.NewReader(buf[:n]),
			ContentLength: aws.Int64(int64(n))})
		return total, err
	}
	if err != nil {
		return total, err
	}
	up, err := b.c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &b.bucket, Key: &id})
	if err != nil {
		return total, err
	}
	abort := func(err error) (int64, error) {
		_, _ = b.c.AbortMultipartUpload(context.WithoutCancel(ctx), &s3.AbortMultipartUploadInput{Bucket: &b.bucket, Key: &id, UploadId: up.UploadId})
		return total, err
	}
	var parts []types.CompletedPart
	for part := int32(1); ; part++ {
		out, err := b.c.UploadPart(ctx, &s3.UploadPartInput{Bucket: &b.bucket, Key: &id, UploadId: up.UploadId,
			PartNumber: aws.Int32(part), Body: bytes.NewReader(buf[:n]), ContentLength: aws.Int64(int64(n))})
		if err != nil {
			return abort(err)
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(part)})
		n, err = io.ReadFull(r, buf)
		total += int64(n)
		if total > max {
			return abort(batch.ErrTooLarge)
		}
		if n == 0 {
			break
		}
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return abort(err)
		}
	}
	_, err = b.c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &b.bucket, Key: &id, UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		return abort(err)
	}
	return total, nil
}

func (b *Store) Open(ctx context.Context, id string) (io.ReadCloser, error) {
	out, err := b.c.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.bucket, Key: &id})
	if err != nil {
		return nil, err
	}
	return out.Body, nil
}

func (b *Store) Delete(ctx context.Context, id string) error {
	_, err := b.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.bucket, Key: &id})
	return err
}
