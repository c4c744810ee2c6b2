package contentlog_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/archive/s3bucket"
	"github.com/turnpike-gw/turnpike/internal/archive/s3fake"
	"github.com/turnpike-gw/turnpike/internal/contentlog"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

func open(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlstore.Open(context.Background(), sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// running starts the service's writer for the test.
func running(t *testing.T, s *contentlog.Service) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func withGroup(t *testing.T, st store.Store, s *contentlog.Service, group string, lc *store.ContentLogging) {
	t.Helper()
	ctx := context.Background()
	if err := st.Groups().Upsert(ctx, store.Group{Name: group, Ratio: 1}); err != nil {
		t.Fatal(err)
	}
	if err := st.Groups().SetLogContent(ctx, group, lc); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(ctx, st.Groups()); err != nil {
		t.Fatal(err)
	}
}

func TestTheKeysSettingDecidesOverItsGroups(t *testing.T) {
	st := open(t)
	s := contentlog.New(contentlog.Options{Store: st.LogContents(), Log: quiet()})
	withGroup(t, st, s, "audited", &store.ContentLogging{Enabled: true, MaxKB: 8})
	withGroup(t, st, s, "plain", nil)
	on, off := &store.ContentLogging{Enabled: true, MaxKB: 2}, &store.ContentLogging{Enabled: false, MaxKB: 64}
	for _, tc := range []struct {
		name  string
		key   *store.ContentLogging
		group string
		want  int
	}{
		{"a key without a setting follows its group", nil, "audited", 8 << 10},
		{"a group without a setting logs nothing", nil, "plain", 0},
		{"an unknown group logs nothing", nil, "missing", 0},
		{"a key turns it on in a plain group", on, "plain", 2 << 10},
		{"a key turns it off in an audited group", off, "audited", 0},
		{"a key's own bound wins", on, "audited", 2 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.Limit(tc.key, tc.group); got != tc.want {
				t.Errorf("Limit = %d, want %d", got, tc.want)
			}
			if c := s.Begin(tc.key, tc.group, 1); (c != nil) != (tc.want > 0) {
				t.Errorf("Begin = %v with limit %d", c, tc.want)
			}
		})
	}
}

// call plays one call through a capture: the forwarded request, a regular
// answer written through the tee, a usage row naming it, and its end.
func call(t *testing.T, s *contentlog.Service, limit *store.ContentLogging, req, answer string, rowed bool) *contentlog.Capture {
	t.Helper()
	c := s.Begin(limit, "", 7)
	r, _ := http.NewRequest("POST", "http://upstream/v1/chat/completions", strings.NewReader(req))
	r.Header.Set("Content-Type", "application/json")
	c.Request(r)
	c.Keys([]string{"chan-key-0123456789"})
	rec := httptest.NewRecorder()
	w := c.Wrap(rec)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(200)
	_, _ = w.Write([]byte(answer))
	if rec.Body.String() != answer {
		t.Fatalf("the client got %q", rec.Body.String())
	}
	if rowed && !c.Row() {
		t.Fatal("an open capture refused its row")
	}
	s.End(c)
	return c
}

func TestContentsAreRedactedCutAndKeptInTheDatabase(t *testing.T) {
	st := open(t)
	s := contentlog.New(contentlog.Options{Store: st.LogContents(), Log: quiet()})
	running(t, s)
	ctx := context.Background()
	lc := &store.ContentLogging{Enabled: true, MaxKB: 1}
	long := `{"answer":"` + strings.Repeat("a", 2000) + `"}`
	c := call(t, s, lc, `{"messages":[{"content":"use AKIAABCDEFGHIJKLMNOP"}]}`, long, true)
	orphan := call(t, s, lc, `{"x":1}`, `{}`, false)
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, c.Ref)
	if err != nil {
		t.Fatal(err)
	}
	if got.Request != `{"messages":[{"content":"use [redacted]"}]}` || got.RequestTruncated {
		t.Errorf("request %q (truncated %v)", got.Request, got.RequestTruncated)
	}
	if len(got.Answer) != 1024 || !got.AnswerTruncated || got.UserID != 7 {
		t.Errorf("answer of %d bytes, truncated %v, user %d", len(got.Answer), got.AnswerTruncated, got.UserID)
	}
	if _, err := s.Get(ctx, orphan.Ref); !errors.Is(err, contentlog.ErrNotFound) {
		t.Errorf("a capture no row names was kept: %v", err)
	}
	if _, err := s.Get(ctx, "../../etc"); !errors.Is(err, contentlog.ErrNotFound) {
		t.Errorf("a malformed ref: %v", err)
	}
}

func TestAStreamsAnswerIsItsJoinedTextAndTheEventsAreNotTeed(t *testing.T) {
	st := open(t)
	s := contentlog.New(contentlog.Options{Store: st.LogContents(), Log: quiet()})
	running(t, s)
	c := s.Begin(&store.ContentLogging{Enabled: true, MaxKB: 64}, "", 1)
	rec := httptest.NewRecorder()
	w := c.Wrap(rec)
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = w.Write([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"sk-proj-AbCdEf\"}}]}\n\n"))
	w.(http.Flusher).Flush()
	c.StreamText("key sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123 done")
	c.Row()
	s.End(c)
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(context.Background(), c.Ref)
	if err != nil {
		t.Fatal(err)
	}
	if got.Answer != "key [redacted] done" {
		t.Errorf("answer %q", got.Answer)
	}
}

func TestABinaryAnswerIsNotedNotKept(t *testing.T) {
	st := open(t)
	s := contentlog.New(contentlog.Options{Store: st.LogContents(), Log: quiet()})
	running(t, s)
	c := s.Begin(&store.ContentLogging{Enabled: true, MaxKB: 64}, "", 1)
	w := c.Wrap(httptest.NewRecorder())
	w.Header().Set("Content-Type", "audio/mpeg")
	_, _ = w.Write([]byte{0xff, 0xfb, 0x90})
	c.Row()
	s.End(c)
	_ = s.Flush(context.Background())
	got, err := s.Get(context.Background(), c.Ref)
	if err != nil || got.Answer != "[audio/mpeg answer not kept]" {
		t.Fatalf("answer %q, %v", got.Answer, err)
	}
}

func bucketService(t *testing.T, st store.Store) (*contentlog.Service, *s3fake.Fake) {
	fake, url := s3fake.New(t)
	b := s3bucket.New(s3bucket.Options{Endpoint: url, Bucket: fake.Bucket, AccessKeyID: fake.Access, SecretAccessKey: "s"})
	return contentlog.New(contentlog.Options{Store: st.LogContents(), Bucket: b, Prefix: "gw", Log: quiet(),
		IsNotFound: func(err error) bool { return errors.Is(err, s3bucket.ErrNotFound) }}), fake
}

func TestWithABucketEachContentIsOneObjectReadBackByItsRef(t *testing.T) {
	st := open(t)
	s, fake := bucketService(t, st)
	running(t, s)
	ctx := context.Background()
	c := call(t, s, &store.ContentLogging{Enabled: true, MaxKB: 64}, `{"k":"ghp_abcdefghijklmnopqrstuvwxyz0123456789"}`, `{"echo":"chan-key-0123456789"}`, true)
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	day := c.Ref[:4] + "/" + c.Ref[4:6] + "/" + c.Ref[6:8]
	obj, ok := fake.Get("gw/content/" + day + "/" + c.Ref + ".json.gz")
	if !ok || bytes.Contains(obj, []byte("chan-key")) {
		t.Fatalf("object missing or unredacted; bucket holds %v", fake.Keys())
	}
	got, err := s.Get(ctx, c.Ref)
	if err != nil || got.Request != `{"k":"[redacted]"}` || got.Answer != `{"echo":"[redacted]"}` {
		t.Fatalf("read back %+v, %v", got, err)
	}
	if _, err := st.LogContents().Get(ctx, c.Ref); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the database kept a copy: %v", err)
	}
}

func TestTheArchiveMovesContentsTheDatabaseKeptToTheBucket(t *testing.T) {
	st := open(t)
	ctx := context.Background()
	day := time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC)
	old := store.LogContent{Ref: "20260308-0123456789abcdef", UserID: 3, Request: "q", Answer: "a", CreatedAt: day.Add(time.Hour)}
	later := store.LogContent{Ref: "20260309-0123456789abcdef", UserID: 3, Request: "q2", Answer: "a2", CreatedAt: day.Add(25 * time.Hour)}
	if err := st.LogContents().Insert(ctx, []store.LogContent{old, later}); err != nil {
		t.Fatal(err)
	}
	s, fake := bucketService(t, st)
	n, err := s.ArchiveWindow(ctx, store.Window{Since: day, Until: day.Add(24 * time.Hour)})
	if err != nil || n != 1 {
		t.Fatalf("moved %d, %v", n, err)
	}
	if _, ok := fake.Get("gw/content/2026/03/08/" + old.Ref + ".json.gz"); !ok {
		t.Fatalf("bucket holds %v", fake.Keys())
	}
	if _, err := st.LogContents().Get(ctx, old.Ref); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the archived content stayed in the database: %v", err)
	}
	if got, err := s.Get(ctx, old.Ref); err != nil || got.Answer != "a" {
		t.Errorf("read back from the bucket: %+v, %v", got, err)
	}
	if got, err := s.Get(ctx, later.Ref); err != nil || got.Answer != "a2" {
		t.Errorf("a content of a later day, from the database: %+v, %v", got, err)
	}
}
