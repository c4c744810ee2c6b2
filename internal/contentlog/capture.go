package contentlog

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Capture is what one call keeps while it runs: the first bytes (up to its
// limit) of the request as it was forwarded, and of the answer as the
// client received it — for a stream, the answer's text joined from its
// deltas, which is what a person reads, rather than the event framing.
// Only calls whose setting is on have one, so a call without it copies
// and allocates nothing. It is used by the call's own goroutine only, and
// handed to the writer once the call is over.
type Capture struct {
	// Ref is the key the usage row names in other.content.
	Ref     string
	userID  int64
	created time.Time
	limit   int

	req, ans           []byte
	reqTrunc, ansTrunc bool
	// reqNote and ansNote stand in for a body that is not text (audio, an
	// upload): what it was and how big, never its bytes.
	reqNote, ansNote string
	// text: the answer is a stream's joined text; nothing more is teed.
	text bool
	keys []string
	// state is open, rowed (a usage row names Ref) or ended; a row
	// written after the call ended (a background response's) names no
	// content, since none will be written for it.
	state atomic.Int32
}

const (
	stateOpen int32 = iota
	stateRowed
	stateEnded
)

// Row reports whether a usage row being built may name this content, and
// from then on the content is written when the call ends.
func (c *Capture) Row() bool {
	return c.state.CompareAndSwap(stateOpen, stateRowed) || c.state.Load() == stateRowed
}

// end closes the capture and reports whether a row names it.
func (c *Capture) end() bool {
	return !c.state.CompareAndSwap(stateOpen, stateEnded) && c.state.Load() == stateRowed
}

func newCapture(limit int, userID int64, now time.Time) *Capture {
	return &Capture{Ref: newRef(now), userID: userID, created: now.UTC(), limit: limit}
}

// Request keeps the body of the upstream request that was sent: the exact
// bytes the gateway checked and forwarded (the client's own when the
// channel speaks its format). A later attempt's body replaces an earlier
// one's, so the kept request is the one that was answered.
func (c *Capture) Request(r *http.Request) {
	c.req, c.reqTrunc, c.reqNote = c.req[:0], false, ""
	if r == nil || r.Body == nil || r.Body == http.NoBody {
		return
	}
	if !isText(r.Header.Get("Content-Type")) {
		c.reqNote = note(r.Header.Get("Content-Type"), r.ContentLength, "request")
		return
	}
	if r.GetBody == nil {
		// A body that cannot be read twice (a streamed upload) is not
		// read here: the upstream must get all of it.
		c.reqNote = note(r.Header.Get("Content-Type"), r.ContentLength, "request")
		return
	}
	body, err := r.GetBody()
	if err != nil {
		return
	}
	defer body.Close()
	// One read into a buffer of the body's own size (one byte more, to
	// tell a body longer than the bound), not a growing one.
	n := c.limit + 1
	if r.ContentLength >= 0 && r.ContentLength < int64(n) {
		n = int(r.ContentLength) + 1
	}
	if cap(c.req) < n {
		c.req = make([]byte, n)
	}
	k, _ := io.ReadFull(body, c.req[:n])
	c.req, c.reqTrunc = cut(c.req[:k], c.limit)
}

// Body keeps a request that reached no upstream (a response-cache hit):
// the client's own body, as the gateway checked it.
func (c *Capture) Body(b []byte) {
	c.req, c.reqTrunc, c.reqNote = c.req[:0], false, ""
	k := min(len(b), c.limit+1)
	c.req, c.reqTrunc = cut(append(c.req, b[:k]...), c.limit)
}

// Keys names the serving channel's keys, replaced by [redacted] wherever
// they appear in what is kept (an upstream error that echoes its key).
func (c *Capture) Keys(keys []string) { c.keys = keys }

// StreamText sets the answer to a stream's joined text.
func (c *Capture) StreamText(s string) {
	c.text = true
	c.ans, c.ansTrunc = cut([]byte(s[:min(len(s), c.limit+utf8.UTFMax)]), c.limit)
	if len(s) > c.limit {
		c.ansTrunc = true
	}
}

// cut bounds b to limit bytes, backing off to a character boundary; it
// reports whether anything was cut.
func cut(b []byte, limit int) ([]byte, bool) {
	if len(b) <= limit {
		return b, false
	}
	b = b[:limit]
	for n := 0; n < utf8.UTFMax && len(b) > 0 && !utf8.Valid(b[max(0, len(b)-utf8.UTFMax):]); n++ {
		b = b[:len(b)-1]
	}
	return b, true
}

// isText says whether a body of this content type is kept as text.
func isText(ct string) bool {
	ct = strings.ToLower(ct)
	return ct == "" || strings.Contains(ct, "json") || strings.HasPrefix(ct, "text/") ||
		strings.Contains(ct, "x-www-form-urlencoded") || strings.Contains(ct, "xml")
}

func note(ct string, size int64, side string) string {
	if ct == "" {
		ct = "binary"
	}
	if size < 0 {
		return "[" + ct + " " + side + " not kept]"
	}
	return "[" + ct + " " + side + " of " + strconv.FormatInt(size, 10) + " bytes not kept]"
}

// Wrap tees what the call writes to its client into the capture: a
// regular answer as sent (JSON, or an error in the client's dialect). An
// event stream is not teed: its joined text comes from the stream tail.
func (c *Capture) Wrap(w http.ResponseWriter) http.ResponseWriter {
	return &teeWriter{ResponseWriter: w, c: c}
}

type teeWriter struct {
	http.ResponseWriter
	c       *Capture
	checked bool
	skip    bool
	n       int64
}

func (t *teeWriter) check() {
	if t.checked {
		return
	}
	t.checked = true
	ct := t.Header().Get("Content-Type")
	switch {
	case strings.HasPrefix(strings.ToLower(ct), "text/event-stream"):
		t.skip = true
	case !isText(ct):
		t.skip = true
		t.c.ansNote = note(ct, -1, "answer")
	}
}

func (t *teeWriter) WriteHeader(code int) {
	t.check()
	t.ResponseWriter.WriteHeader(code)
}

func (t *teeWriter) Write(p []byte) (int, error) {
	t.check()
	t.n += int64(len(p))
	if !t.skip && !t.c.text && !t.c.ansTrunc {
		room := t.c.limit - len(t.c.ans)
		if len(p) > room {
			t.c.ans, t.c.ansTrunc = cut(append(t.c.ans, p[:min(len(p), room+utf8.UTFMax)]...), t.c.limit)
			t.c.ansTrunc = true
		} else {
			t.c.ans = append(t.c.ans, p...)
		}
	}
	return t.ResponseWriter.Write(p)
}

// Flush keeps the stream pump's flushes reaching the client.
func (t *teeWriter) Flush() {
	if fl, ok := t.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (a cut binary
// answer closes it).
func (t *teeWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
