package contentlog

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/turnpike-gw/turnpike/internal/archive"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Options are where contents go and how many may wait.
type Options struct {
	// Store keeps contents in the database; with Bucket set it is only
	// read (contents kept before the bucket was configured).
	Store store.LogContentRepo
	// Bucket is the usage archive's bucket (logs.archive.s3); nil keeps
	// contents in the database.
	Bucket archive.Bucket
	Prefix string
	// IsNotFound tells the bucket's missing-object error.
	IsNotFound func(error) bool
	Log        *slog.Logger
	// Queue bounds the contents waiting for the writer (default 1024);
	// past it a content is dropped, never waited for.
	Queue int
}

// Service decides which calls keep their content, takes the captures of
// finished calls, writes them in the background and reads them back.
type Service struct {
	Policy
	o       Options
	queue   chan item
	dropped atomic.Int64
	warned  atomic.Int64
}

// item is a finished call's capture, or a flush marker (done).
type item struct {
	c    *Capture
	done chan struct{}
}

// New returns the service; Run must be running for anything to be written.
func New(o Options) *Service {
	if o.Queue <= 0 {
		o.Queue = 1024
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return &Service{o: o, queue: make(chan item, o.Queue)}
}

// Begin is a call's capture when its key's or group's setting is on, else
// nil (and the call keeps nothing).
func (s *Service) Begin(key *store.ContentLogging, group string, userID int64) *Capture {
	limit := s.Limit(key, group)
	if limit == 0 {
		return nil
	}
	return newCapture(limit, userID, time.Now())
}

// End hands a finished call's capture to the writer without waiting,
// when a usage row names it (else it is dropped: no row would lead to it).
// A content the queue has no room for is dropped too (its row then answers
// 404 for content), since keeping it must never slow a call down.
func (s *Service) End(c *Capture) {
	if !c.end() {
		return
	}
	select {
	case s.queue <- item{c: c}:
	default:
		n := s.dropped.Add(1)
		if last := s.warned.Load(); time.Since(time.Unix(0, last)) > time.Minute && s.warned.CompareAndSwap(last, time.Now().UnixNano()) {
			s.o.Log.Warn("content logging: the writer is behind; contents dropped", "dropped_total", n)
		}
	}
}

// Dropped is how many contents were dropped because the queue was full.
func (s *Service) Dropped() int64 { return s.dropped.Load() }

// Flush waits until every content submitted before it was written.
func (s *Service) Flush(ctx context.Context) error {
	done := make(chan struct{})
	select {
	case s.queue <- item{done: done}:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// maxBatch bounds the contents written in one database transaction;
// writeTimeout one batch's writing.
const (
	maxBatch     = 64
	writeTimeout = 30 * time.Second
)

// Run writes submitted contents until ctx ends, then writes what is still
// queued (within a few seconds) and returns.
func (s *Service) Run(ctx context.Context) {
	for {
		select {
		case it := <-s.queue:
			s.drain(context.WithoutCancel(ctx), it)
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			for {
				select {
				case it := <-s.queue:
					s.drain(fctx, it)
				default:
					return
				}
			}
		}
	}
}

// drain writes first and whatever else is queued, in order, a batch at a
// time; a flush marker is released once everything before it is written.
func (s *Service) drain(ctx context.Context, first item) {
	batch := make([]*Capture, 0, maxBatch)
	next := first
	for {
		if next.done != nil {
			s.write(ctx, batch)
			batch = batch[:0]
			close(next.done)
		} else {
			batch = append(batch, next.c)
			if len(batch) == maxBatch {
				s.write(ctx, batch)
				batch = batch[:0]
			}
		}
		select {
		case next = <-s.queue:
		default:
			s.write(ctx, batch)
			return
		}
	}
}

// write redacts a batch and stores it; a batch that cannot be stored is
// logged and dropped (contents are records for people, not the books).
func (s *Service) write(ctx context.Context, batch []*Capture) {
	if len(batch) == 0 {
		return
	}
	recs := make([]store.LogContent, len(batch))
	for i, c := range batch {
		recs[i] = c.record()
	}
	// A store or bucket that hangs must not hold the queue for ever.
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	var err error
	if s.o.Bucket != nil {
		for _, r := range recs {
			if err = s.put(ctx, r); err != nil {
				break
			}
		}
	} else {
		err = s.o.Store.Insert(ctx, recs)
	}
	if err != nil {
		s.o.Log.Warn("content logging: contents not written", "contents", len(recs), "err", err)
	}
}

// record is the capture as kept: redacted, valid UTF-8.
func (c *Capture) record() store.LogContent {
	req, ans := string(c.req), string(c.ans)
	if c.reqNote != "" {
		req = c.reqNote
	}
	if c.ansNote != "" && !c.text {
		ans = c.ansNote
	}
	return store.LogContent{Ref: c.Ref, UserID: c.userID, CreatedAt: c.created,
		Request: Redact(strings.ToValidUTF8(req, "\uFFFD"), c.keys), RequestTruncated: c.reqTrunc,
		Answer: Redact(strings.ToValidUTF8(ans, "\uFFFD"), c.keys), AnswerTruncated: c.ansTrunc}
}

// ErrNotFound is a content that was never kept (logging was off, the
// writer dropped it, or it was deleted).
var ErrNotFound = errors.New("contentlog: no content")

// Get reads a content back by its ref: from the bucket when one is set
// (falling back to the database for contents kept before it was), else
// from the database.
func (s *Service) Get(ctx context.Context, ref string) (store.LogContent, error) {
	if !validRef(ref) {
		return store.LogContent{}, ErrNotFound
	}
	if s.o.Bucket != nil {
		c, err := s.get(ctx, ref)
		if !errors.Is(err, ErrNotFound) {
			return c, err
		}
	}
	c, err := s.o.Store.Get(ctx, ref)
	if errors.Is(err, store.ErrNotFound) {
		return c, ErrNotFound
	}
	return c, err
}

// FromConfig is content logging where the configuration puts it: the
// usage archive's bucket (through the archive's own client) when
// logs.archive.s3 is set, else the database. The serving node and
// `turnpike logs archive` build it the same way.
func FromConfig(c config.Logs, st store.LogContentRepo, log *slog.Logger) *Service {
	o := Options{Store: st, Log: log}
	if r, ok := archive.NewReader(c); ok {
		o.Bucket, o.Prefix, o.IsNotFound = r.Bucket, r.Prefix, r.IsNotFound
	}
	return New(o)
}
