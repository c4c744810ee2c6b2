package compat

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The fakes behave like the real providers as far as the compatibility tests
// need, and deterministically:
//   - the last turn carries a tool result  -> text "Weather report: <result>"
//   - the last user turn asks for a server error -> a 500 in the dialect
//   - it asks to echo the settings         -> text "Settings: ..." describing the
//     system prompt, turn count and sampling parameters as received
//   - it asks to describe the image        -> text "Image: <mime>, <n> bytes."
//   - it asks for the weather              -> a get_weather {"city":"Paris"} call
//   - it asks for a slow stream            -> the hello text, streamed with a
//     pause after the first delta, so buffering in the gateway shows
//   - anything else                        -> text "Hello from the <kind> upstream."
//
// Every answer reports the same usage, so the clients and the billing check
// can tell that the upstream's figures were passed on and not re-counted.
const (
	fakeInputTokens  = 21
	fakeOutputTokens = 9
	// slowPause is how long a slow stream stalls after its first delta.
	slowPause   = 600 * time.Millisecond
	weatherTool = "get_weather"
	weatherArgs = `{"city":"Paris"}`
)

// turn is what a fake needs from a request, whatever its dialect.
type turn struct {
	toolResult string          // text of the tool result(s) in the last turn
	userText   string          // text of the last user turn
	images     []string        // "<mime>, <n> bytes" per image of the last user turn
	tools      map[string]bool // declared function names
	settings   settings
}

// settings are the request parameters as the upstream received them.
type settings struct {
	system      string
	turns       int
	maxTokens   *float64
	temperature *float64
	topP        *float64
	stop        []string
}

func (s settings) String() string {
	num := func(f *float64) string {
		if f == nil {
			return "-"
		}
		return strconv.FormatFloat(*f, 'g', -1, 64)
	}
	stop := strings.Join(s.stop, "|")
	if stop == "" {
		stop = "-"
	}
	return fmt.Sprintf("Settings: system=%q turns=%d max_tokens=%s temperature=%s top_p=%s stop=%s",
		s.system, s.turns, num(s.maxTokens), num(s.temperature), num(s.topP), stop)
}

// reply is the fake's decision.
type reply struct {
	text     string // answer text, when not a tool call
	toolCall bool
	fail     bool // answer 500 in the dialect
	slow     bool // stream with a pause after the first delta
}

// pauseAfter stalls a slow stream after its first delta.
func (r reply) pauseAfter(i int) {
	if r.slow && i == 0 {
		time.Sleep(slowPause)
	}
}

func decide(kind string, t turn) (reply, string) {
	ask := strings.ToLower(t.userText)
	switch {
	case t.toolResult != "":
		return reply{text: "Weather report: " + t.toolResult}, ""
	case strings.Contains(ask, "server error"):
		return reply{fail: true}, ""
	case strings.Contains(ask, "echo the settings"):
		return reply{text: t.settings.String()}, ""
	case strings.Contains(ask, "describe the image"):
		if len(t.images) == 0 {
			return reply{}, "the request asks about an image but carries none"
		}
		return reply{text: "Image: " + strings.Join(t.images, "; ") + "."}, ""
	case strings.Contains(ask, "slow stream"):
		return reply{text: "Hello from the " + kind + " upstream.", slow: true}, ""
	case strings.Contains(ask, "weather"):
		if !t.tools[weatherTool] {
			return reply{}, "the request asks for the weather but declares no " + weatherTool + " tool"
		}
		return reply{toolCall: true}, ""
	}
	return reply{text: "Hello from the " + kind + " upstream."}, ""
}

// pieces splits an answer into several stream deltas.
func pieces(s string) []string {
	words := strings.SplitAfter(s, " ")
	if len(words) < 3 {
		return []string{s}
	}
	n := len(words) / 3
	return []string{strings.Join(words[:n], ""), strings.Join(words[n:2*n], ""), strings.Join(words[2*n:], "")}
}

// recorder keeps what a fake saw: problems (requests a real provider would
// refuse) and the number of successful answers per model.
type recorder struct {
	kind     string
	mu       sync.Mutex
	problems []string
	answered map[string]int
	// served counts answers by model and gateway endpoint name, for the
	// endpoints other than chat.
	served map[endpointKey]int
}

// endpointKey is a model as served on one endpoint.
type endpointKey struct{ model, endpoint string }

func newRecorder(kind string) *recorder {
	return &recorder{kind: kind, answered: map[string]int{}, served: map[endpointKey]int{}}
}

func (rc *recorder) problem(r *http.Request, msg string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.problems = append(rc.problems, fmt.Sprintf("%s fake: %s %s: %s", rc.kind, r.Method, r.URL.RequestURI(), msg))
}

func (rc *recorder) ok(model string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.answered[model]++
}

func (rc *recorder) servedAt(model, endpoint string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.served[endpointKey{model, endpoint}]++
}

// servedCounts copies the answers per model and endpoint.
func (rc *recorder) servedCounts() map[endpointKey]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(map[endpointKey]int, len(rc.served))
	for k, v := range rc.served {
		out[k] = v
	}
	return out
}

func (rc *recorder) snapshot() ([]string, map[string]int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	counts := make(map[string]int, len(rc.answered))
	for k, v := range rc.answered {
		counts[k] = v
	}
	return append([]string(nil), rc.problems...), counts
}

// fake is one upstream: a server plus what it recorded.
type fake struct {
	*recorder
	srv *httptest.Server
	key string
}

func startFake(t *testing.T, kind, key string, h func(rc *recorder, w http.ResponseWriter, r *http.Request)) *fake {
	rc := newRecorder(kind)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h(rc, w, r) }))
	t.Cleanup(srv.Close)
	return &fake{recorder: rc, srv: srv, key: key}
}

// dialect is what differs between the fakes: checking a request (which
// returns how to answer it) and the error envelope.
type dialect struct {
	kind  string
	check func(r *http.Request) (answer func(http.ResponseWriter, reply), t turn, problem string)
	error func(status int, msg string) any
}

// handler checks, decides and answers; a request the real provider would
// refuse is recorded and answered 400 in the dialect.
func (d dialect) handler(model string) func(rc *recorder, w http.ResponseWriter, r *http.Request) {
	return func(rc *recorder, w http.ResponseWriter, r *http.Request) {
		answer, t, problem := d.check(r)
		var rep reply
		if problem == "" {
			rep, problem = decide(d.kind, t)
		}
		switch {
		case problem != "":
			rc.problem(r, problem)
			writeJSON(w, http.StatusBadRequest, d.error(http.StatusBadRequest, "fake "+d.kind+" upstream: "+problem))
		case rep.fail:
			writeJSON(w, http.StatusInternalServerError, d.error(http.StatusInternalServerError, "fake "+d.kind+" upstream: a server error, as asked"))
		default:
			rc.ok(model)
			answer(w, rep)
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// sseWriter writes server-sent events and flushes each one, as providers do.
type sseWriter struct {
	w  http.ResponseWriter
	fl http.Flusher
}

func newSSE(w http.ResponseWriter) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	return &sseWriter{w: w, fl: fl}
}

func (s *sseWriter) send(event string, v any) {
	var data []byte
	if raw, ok := v.(string); ok {
		data = []byte(raw)
	} else {
		data, _ = json.Marshal(v)
	}
	if event != "" {
		fmt.Fprintf(s.w, "event: %s\n", event)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", data)
	if s.fl != nil {
		s.fl.Flush()
	}
}

// unknownKeys names the top-level fields outside allowed, sorted, because
// the real APIs refuse fields they do not know.
func unknownKeys(body map[string]json.RawMessage, allowed ...string) []string {
	ok := make(map[string]bool, len(allowed))
	for _, a := range allowed {
		ok[a] = true
	}
	var bad []string
	for k := range body {
		if !ok[k] {
			bad = append(bad, k)
		}
	}
	sort.Strings(bad)
	return bad
}

// contentText reads a content value that is a string or a list of blocks
// with "text" fields (the OpenAI and Anthropic shapes).
func contentText(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return "", false
	}
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.Text)
	}
	return b.String(), true
}

// describeImage checks base64 image data and describes it.
func describeImage(mime, data string) (string, bool) {
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil || mime == "" {
		return "", false
	}
	return fmt.Sprintf("%s, %d bytes", mime, len(raw)), true
}

// dataURL splits data:<mime>;base64,<data>.
func dataURL(u string) (mime, data string, ok bool) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "", "", false
	}
	head, data, ok := strings.Cut(rest, ",")
	mime, isB64 := strings.CutSuffix(head, ";base64")
	return mime, data, ok && isB64
}

func floatPtr(raw json.RawMessage) *float64 {
	var f float64
	if json.Unmarshal(raw, &f) != nil {
		return nil
	}
	return &f
}

// readBody reads a request body up to a size no test request comes near.
func readBody(r *http.Request) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r.Body, 4<<20))
}

// redact keeps enough of a credential to tell which one was sent, never all.
func redact(s string) string {
	if len(s) <= 10 {
		return strings.Repeat("*", len(s))
	}
	return s[:10] + "…"
}
