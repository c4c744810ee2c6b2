package store

import (
	"context"
	"time"
)

// ContentLogging is a group's or key's log_content object (CONTRACT §20):
// whether the request and answer of its calls are kept beside their usage
// rows, and how much of each (MaxKB KiB). A key's setting, when it has one,
// overrides its group's.
type ContentLogging struct {
	Enabled bool `json:"enabled"`
	MaxKB   int  `json:"max_kb"`
}

// LogContent is the kept request and answer of one call, secrets already
// redacted. Ref is the key the usage row names in other.content; UserID the
// row's owner. A side longer than the setting's bound is cut there and
// marked truncated.
type LogContent struct {
	Ref              string    `json:"ref"`
	UserID           int64     `json:"user_id"`
	Request          string    `json:"request"`
	Answer           string    `json:"answer"`
	RequestTruncated bool      `json:"request_truncated"`
	AnswerTruncated  bool      `json:"answer_truncated"`
	CreatedAt        time.Time `json:"created_at"`
}

// LogContentRepo keeps call contents in the database (when no object
// storage is configured for them).
type LogContentRepo interface {
	// Insert writes a batch in one transaction; a ref already stored is
	// left as it is (a replayed batch writes nothing twice).
	Insert(ctx context.Context, cs []LogContent) error
	// Get returns one content by ref, or ErrNotFound.
	Get(ctx context.Context, ref string) (LogContent, error)
	// Each calls fn for every content created in w, oldest first, in
	// bounded pages (the archive moving a day to object storage).
	Each(ctx context.Context, w Window, fn func(LogContent) error) error
	// PruneRange deletes at most limit contents created in w and reports
	// how many it deleted.
	PruneRange(ctx context.Context, w Window, limit int) (int64, error)
}
