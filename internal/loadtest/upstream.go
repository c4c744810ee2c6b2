package loadtest

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// PacedSuffix marks a model name whose streamed answers the fake upstream
// paces with its chunk delay; other models stream as fast as possible. The
// choice rides in the model name because it is the one request field both
// the bare proxy and the gateway forward unchanged.
const PacedSuffix = "-paced"

// SlowSuffix marks a model whose streamed answers the fake upstream paces
// with its slow delay, for the many-streams mode.
const SlowSuffix = "-slow"

// Upstream is a fast OpenAI-compatible chat endpoint. Its answers are
// precomputed so that its own CPU cost stays small next to the proxy's.
type Upstream struct {
	// Chunks is the number of content chunks in a streamed answer.
	Chunks int
	// Delay is the pause before each content chunk of a paced stream, and
	// SlowDelay that of a slow one.
	Delay, SlowDelay time.Duration

	regular []byte
	chunk   []byte
	tail    []byte
}

// NewUpstream returns a fake upstream streaming chunks content chunks and
// pausing delay between them for paced models.
func NewUpstream(chunks int, delay time.Duration) *Upstream {
	u := &Upstream{Chunks: chunks, Delay: delay}
	u.regular = []byte(`{"id":"chatcmpl-bench","object":"chat.completion","created":1704067200,"model":"bench-model",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"Hello! This is a benchmark answer of a typical short length."},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":12,"completion_tokens":14,"total_tokens":26}}`)
	u.chunk = []byte(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1704067200,"model":"bench-model",` +
		`"choices":[{"index":0,"delta":{"content":"word "},"finish_reason":null}]}` + "\n\n")
	completion := strconv.Itoa(chunks)
	u.tail = []byte(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1704067200,"model":"bench-model",` +
		`"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
		`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1704067200,"model":"bench-model",` +
		`"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":` + completion + `,"total_tokens":` + strconv.Itoa(12+chunks) + `}}` + "\n\n" +
		"data: [DONE]\n\n")
	return u
}

// Handler serves POST /v1/chat/completions.
func (u *Upstream) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", u.chat)
	return mux
}

func (u *Upstream) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil || !gjson.ValidBytes(body) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"message":"fake upstream: body is not JSON","type":"invalid_request_error"}}`)
		return
	}
	if !gjson.GetBytes(body, "stream").Bool() {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(u.regular)))
		_, _ = w.Write(u.regular)
		return
	}
	var delay time.Duration
	switch model := gjson.GetBytes(body, "model").String(); {
	case strings.HasSuffix(model, PacedSuffix):
		delay = u.Delay
	case strings.HasSuffix(model, SlowSuffix):
		delay = u.SlowDelay
	}
	u.stream(w, r, delay)
}

func (u *Upstream) stream(w http.ResponseWriter, r *http.Request, delay time.Duration) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	rc := http.NewResponseController(w)
	start := time.Now()
	// A client that left ends the handler at once rather than a chunk's
	// delay later: a handler that outlives its reset stream is what makes
	// an HTTP/2 server call a client too fast at resets and close the
	// whole connection (GOAWAY), failing every stream it carried.
	var due *time.Timer
	if delay > 0 {
		due = time.NewTimer(delay)
		defer due.Stop()
	}
	for i := 1; i <= u.Chunks; i++ {
		// Chunk i is due at start + i × delay; waiting until then instead
		// of for delay keeps overwaiting from adding up along the stream.
		if due != nil {
			due.Reset(time.Until(start.Add(time.Duration(i) * delay)))
			select {
			case <-due.C:
			case <-r.Context().Done():
				return
			}
		}
		if r.Context().Err() != nil {
			return
		}
		if _, err := w.Write(u.chunk); err != nil {
			return
		}
		_ = rc.Flush()
	}
	_, _ = w.Write(u.tail)
	_ = rc.Flush()
}
