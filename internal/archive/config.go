package archive

import (
	"errors"
	"log/slog"
	"time"

	"github.com/turnpike-gw/turnpike/internal/archive/s3bucket"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Every is how often a node runs the job: once a day (and at start).
const Every = 24 * time.Hour

func isNotFound(err error) bool { return errors.Is(err, s3bucket.ErrNotFound) }

// NewReader reads the archive the configuration names; false when none is.
func NewReader(c config.Logs) (Reader, bool) {
	b := c.Archive.S3
	if !b.Set() {
		return Reader{}, false
	}
	return Reader{Bucket: bucket(b), Prefix: b.Prefix, IsNotFound: isNotFound}, true
}

// New is the job the configuration asks for (days is the retention);
// false when no archive is configured, in which case nothing is ever
// deleted.
func New(c config.Logs, days int, logs store.LogRepo, log *slog.Logger) (*Job, bool) {
	r, ok := NewReader(c)
	if !ok {
		return nil, false
	}
	return &Job{Logs: logs, Bucket: r.Bucket, Prefix: r.Prefix, Days: days, Now: time.Now, Log: log,
		PartRows: 50000, DeleteBatch: 1000, Pause: 50 * time.Millisecond, IsNotFound: isNotFound}, true
}

func bucket(b config.S3Bucket) Bucket {
	return s3bucket.New(s3bucket.Options{Endpoint: b.Endpoint, Region: b.Region, Bucket: b.Bucket,
		AccessKeyID: b.AccessKeyID, SecretAccessKey: b.SecretAccessKey})
}
