package contentlog

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// body4k is a chat request of about 4 KB with one secret in it.
var body4k = `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("lorem ipsum dolor sit amet ", 150) +
	` key sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123"}]}`

// BenchmarkCaptureOnTheCallPath is what a logged call pays while it runs:
// the capture, a copy of the forwarded body and of a 4 KB answer.
func BenchmarkCaptureOnTheCallPath(b *testing.B) {
	s := New(Options{Queue: 1})
	lc := &store.ContentLogging{Enabled: true, MaxKB: 64}
	req, _ := http.NewRequest("POST", "http://up/v1/chat/completions", strings.NewReader(body4k))
	answer := []byte(body4k)
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "application/json")
	b.ReportAllocs()
	for b.Loop() {
		c := s.Begin(lc, "", 1)
		c.Request(req)
		w := c.Wrap(rec)
		_, _ = w.Write(answer)
		rec.Body.Reset()
		c.Row()
	}
}

// BenchmarkRecordInTheWriter is the writer's work per logged call: both
// sides redacted.
func BenchmarkRecordInTheWriter(b *testing.B) {
	c := &Capture{Ref: newRef(timeNow()), limit: 64 << 10, req: []byte(body4k), ans: []byte(body4k), keys: []string{"chan-key-0123456789"}}
	b.SetBytes(int64(2 * len(body4k)))
	b.ReportAllocs()
	for b.Loop() {
		_ = c.record()
	}
}
