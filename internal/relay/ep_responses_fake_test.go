package relay

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// fakeResponsesAPI is an upstream speaking the Responses API; it records
// every request and checks the channel's credentials.
type fakeResponsesAPI struct {
	mu      sync.Mutex
	seen    []seenRequest
	key     string
	noUsage bool
	// bgPolls counts retrievals of the background response; it completes
	// on the second.
	bgPolls int
	// bgDeleted is set once the background response was deleted: it is
	// gone for every later call.
	bgDeleted bool
}

const respUsage = `{"input_tokens":1000,"input_tokens_details":{"cached_tokens":0},"output_tokens":500,"output_tokens_details":{"reasoning_tokens":120},"total_tokens":1500}`

func respObject(id, model, usage string) string {
	return fmt.Sprintf(`{"id":%q,"object":"response","created_at":1,"status":"completed","model":%q,"output":[{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello there","annotations":[]}]}]%s}`,
		id, model, usage)
}

func newFakeResponsesAPI(t *testing.T, f *fakeResponsesAPI) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := record(t, r)
		f.mu.Lock()
		f.seen = append(f.seen, s)
		key := f.key
		f.mu.Unlock()
		if s.auth != "Bearer "+key {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}`)
			return
		}
		usage := `,"usage":` + respUsage
		if f.noUsage {
			usage = ""
		}
		switch {
		case r.Method == http.MethodPost && s.path == "/v1/responses" && s.json("stream").Bool():
			f.stream(w, s.json("model").String(), usage)
		case r.Method == http.MethodPost && s.path == "/v1/responses" && s.json("background").Bool():
			writeJSONString(w, strings.Replace(respObject("resp_bg", s.json("model").String(), `,"usage":null`), `"status":"completed"`, `"status":"queued"`, 1))
		case s.path == "/v1/responses/resp_bg" && f.isDeleted():
			w.WriteHeader(404)
			fmt.Fprint(w, `{"error":{"message":"No response found with id 'resp_bg'.","type":"invalid_request_error"}}`)
		case r.Method == http.MethodDelete && s.path == "/v1/responses/resp_bg":
			f.mu.Lock()
			f.bgDeleted = true
			f.mu.Unlock()
			writeJSONString(w, `{"id":"resp_bg","object":"response","deleted":true}`)
		case r.Method == http.MethodGet && s.path == "/v1/responses/resp_bg" && strings.Contains(s.query, "stream=true"):
			done := fmt.Sprintf(`{"type":"response.completed","sequence_number":2,"response":%s}`, respObject("resp_bg", "m", usage))
			writeSSE(w,
				[2]string{"response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hello there"}`},
				[2]string{"response.completed", done})
		case r.Method == http.MethodGet && s.path == "/v1/responses/resp_bg":
			f.mu.Lock()
			f.bgPolls++
			done := f.bgPolls >= 2
			f.mu.Unlock()
			if !done {
				writeJSONString(w, strings.Replace(respObject("resp_bg", "m", `,"usage":null`), `"status":"completed"`, `"status":"in_progress"`, 1))
				return
			}
			writeJSONString(w, respObject("resp_bg", "m", usage))
		case r.Method == http.MethodPost && s.path == "/v1/responses":
			writeJSONString(w, respObject("resp_up1", s.json("model").String(), usage))
		case r.Method == http.MethodPost && s.path == "/v1/responses/compact":
			writeJSONString(w, `{"id":"cmp_1","object":"response.compaction","created_at":1,"output":[{"type":"compaction","encrypted_content":"xyz"}]`+usage+`}`)
		case r.Method == http.MethodGet && s.path == "/v1/responses/resp_up1":
			writeJSONString(w, respObject("resp_up1", "stored-model", usage))
		case r.Method == http.MethodDelete && s.path == "/v1/responses/resp_up1":
			writeJSONString(w, `{"id":"resp_up1","object":"response","deleted":true}`)
		default:
			w.WriteHeader(404)
			fmt.Fprintf(w, `{"error":{"message":"no route %s %s","type":"invalid_request_error"}}`, r.Method, s.path)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (f *fakeResponsesAPI) stream(w http.ResponseWriter, model, usage string) {
	created := fmt.Sprintf(`{"type":"response.created","sequence_number":0,"response":{"id":"resp_up2","object":"response","status":"in_progress","model":%q,"output":[]}}`, model)
	done := fmt.Sprintf(`{"type":"response.completed","sequence_number":3,"response":{"id":"resp_up2","object":"response","status":"completed","model":%q,"output":[]%s}}`, model, usage)
	writeSSE(w,
		[2]string{"response.created", created},
		[2]string{"response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hello "}`},
		[2]string{"response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"there"}`},
		[2]string{"response.completed", done})
}

func (f *fakeResponsesAPI) last(t *testing.T) seenRequest {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.seen) == 0 {
		t.Fatal("the upstream received nothing")
	}
	return f.seen[len(f.seen)-1]
}

func (f *fakeResponsesAPI) isDeleted() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bgDeleted
}

func (f *fakeResponsesAPI) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seen)
}

// responsesChannel adds an OpenAI-type channel on a fake Responses API
// serving gpt-4o-mini as "gpt-4o-mini-mapped", and wires the response index.
func (e *env) responsesChannel(name string, f *fakeResponsesAPI) *store.Channel {
	up := newFakeResponsesAPI(e.t, f)
	ch := e.channel(name, up.URL, func(c *store.Channel) {
		c.ModelMapping = map[string]string{"gpt-4o-mini": "gpt-4o-mini-mapped"}
	})
	f.key = ch.Key
	e.useResponseIndex()
	return ch
}

func (e *env) useResponseIndex() {
	if e.relay.Responses == nil {
		e.relay.Responses = NewResponseIndex(e.st.Responses(), nil)
	}
}

// otherKey creates a second user with a key and quota.
func (e *env) otherKey(key string) *store.User {
	ctx := context.Background()
	u := &store.User{Username: "bob", Role: store.RoleUser, Group: "default", Status: store.StatusEnabled}
	if err := e.st.Users().Create(ctx, u); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.billing.Credit(ctx, billing.Credit{UserID: u.ID, Delta: 1_000_000, Note: "test"}); err != nil {
		e.t.Fatal(err)
	}
	tok := &store.Token{UserID: u.ID, Name: "b", KeyHash: auth.HashKey(key), KeyMasked: auth.MaskKey(key), Quota: -1, Status: store.StatusEnabled}
	if err := e.st.Tokens().Create(ctx, tok); err != nil {
		e.t.Fatal(err)
	}
	return u
}

func (e *env) do(method, path, key string) *http.Response {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// sseEventNames lists the event names of an SSE body in order.
func sseEventNames(body string) []string {
	var names []string
	for _, line := range strings.Split(body, "\n") {
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, name)
		}
	}
	return names
}

// waitFor polls cond briefly; index writes happen after the answer.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 100 && !cond(); i++ {
		time.Sleep(10 * time.Millisecond)
	}
}
