// Package archive moves usage rows past the retention to object storage
// (CONTRACT §20): per UTC day, gzip JSON lines in parts and a manifest of
// the day's row count and quota sum, read back and checked before the
// day's rows are deleted in small batches. It also reads archived days
// back for the books (reconcile).
package archive

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
)

// Bucket is the object store the archive writes to: whole objects by key.
type Bucket interface {
	Put(ctx context.Context, key string, body []byte) error
	// Get returns ErrNotFound (or an error wrapping it) for a missing key.
	Get(ctx context.Context, key string) ([]byte, error)
}

// ErrNotFound is a key the bucket does not hold; a Bucket's own not-found
// error is mapped to it by IsNotFound.
var ErrNotFound = errors.New("archive: no such object")

// Manifest is a day's manifest.json.
type Manifest struct {
	Day   string `json:"day"` // YYYY-MM-DD (UTC)
	Rows  int64  `json:"rows"`
	Quota int64  `json:"quota"`
	// MaxID is the highest row id archived for the day.
	MaxID int64  `json:"max_id"`
	Parts []Part `json:"parts"`
}

// Part is one object of a day's rows.
type Part struct {
	Name  string `json:"name"`
	Rows  int64  `json:"rows"`
	Quota int64  `json:"quota"`
}

// dayDir is <prefix>/usage/YYYY/MM/DD.
func dayDir(prefix string, day time.Time) string {
	return path.Join(strings.Trim(prefix, "/"), "usage", day.UTC().Format("2006/01/02"))
}

func manifestKey(prefix string, day time.Time) string { return dayDir(prefix, day) + "/manifest.json" }

func partKey(prefix string, day time.Time, name string) string {
	return dayDir(prefix, day) + "/" + name
}

// partName is the n-th part's object name (1-based).
func partName(n int) string { return fmt.Sprintf("%05d.jsonl.gz", n) }

// utcDay is the start of t's UTC day.
func utcDay(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }
