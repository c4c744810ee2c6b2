package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

const (
	refusedKey   = "sk-refused-key-0000"
	acceptedKey  = "sk-accepted-key-1111"
	throttledKey = "sk-throttled-key-2222"
	echoedKey    = "sk-echoed-key-3333"
)

// keyedUpstream is an OpenAI-compatible upstream that answers by the key
// it is sent: refusedKey gets 401 (quoting the key, as providers do),
// throttledKey 429, echoedKey 400 quoting the key in a message that goes
// back to the client, any other key a chat or embeddings answer.
type keyedUpstream struct {
	mu   sync.Mutex
	keys []string
}

func newKeyedUpstream(t *testing.T) (*keyedUpstream, *httptest.Server) {
	u := &keyedUpstream{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		u.mu.Lock()
		u.keys = append(u.keys, key)
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case key == refusedKey:
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s","type":"invalid_request_error","code":"invalid_api_key"}}`, key)
		case key == echoedKey:
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"message":"the request made with %s is malformed","type":"invalid_request_error"}}`, key)
		case key == throttledKey:
			w.WriteHeader(429)
			fmt.Fprint(w, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
		case r.URL.Path == "/v1/embeddings":
			fmt.Fprint(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1]}],"model":"e","usage":{"prompt_tokens":3,"total_tokens":3}}`)
		default:
			fmt.Fprint(w, `{"id":"c","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
		}
	}))
	t.Cleanup(srv.Close)
	return u, srv
}

// sent returns the keys received since the last call.
func (u *keyedUpstream) sent() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := u.keys
	u.keys = nil
	return out
}

func TestSeveralKeysPerChannel(t *testing.T) {
	chatBody := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
	embedBody := `{"model":"gpt-4o-mini","input":"hi"}`
	cases := []struct {
		name string
		path string
		body string
		keys []string
		// first is what the first call sends (round robin starts at key 0);
		// then what every later call sends.
		first, then []string
		status      int
		states      []string
		routable    bool
	}{
		{"chat: a refused key is taken out and the call goes on with the next key", "/v1/chat/completions", chatBody,
			[]string{refusedKey, acceptedKey}, []string{refusedKey, acceptedKey}, []string{acceptedKey}, 200,
			[]string{routing.StateAutoDisabled, routing.StateHealthy}, true},
		{"embeddings: the same on an endpoint call", "/v1/embeddings", embedBody,
			[]string{refusedKey, acceptedKey}, []string{refusedKey, acceptedKey}, []string{acceptedKey}, 200,
			[]string{routing.StateAutoDisabled, routing.StateHealthy}, true},
		{"a throttled key cools on its own", "/v1/chat/completions", chatBody,
			[]string{throttledKey, acceptedKey}, []string{throttledKey, acceptedKey}, []string{acceptedKey}, 200,
			[]string{routing.StateCooling, routing.StateHealthy}, true},
		{"every key refused takes the channel out", "/v1/chat/completions", chatBody,
			[]string{refusedKey, refusedKey}, []string{refusedKey, refusedKey}, nil, 502,
			[]string{routing.StateAutoDisabled, routing.StateAutoDisabled}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			up, srv := newKeyedUpstream(t)
			c := e.channel("multi", srv.URL, func(c *store.Channel) {
				c.Key = strings.Join(tc.keys, "\n") + "\n"
				c.Settings = map[string]any{"key_selection": "round_robin"}
			})
			resp := e.post(tc.path, testKey, tc.body)
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("first call: %d %s", resp.StatusCode, raw)
			}
			if got := up.sent(); !slices.Equal(got, tc.first) {
				t.Fatalf("first call sent %q, want %q", got, tc.first)
			}
			for _, k := range tc.keys {
				if strings.Contains(string(raw), k) {
					t.Fatalf("the answer quotes a channel key: %s", raw)
				}
			}
			h := e.router.Health
			for i, want := range tc.states {
				if st := h.Status(c.ID, i); st.State != want || strings.Contains(st.Reason, refusedKey) {
					t.Fatalf("key %d: %+v, want %s without the key in the reason", i, st, want)
				}
			}
			ch := e.router.Table().Channel(c.ID)
			if ch.Routable(h) != tc.routable {
				t.Fatalf("channel routable %v, want %v", ch.Routable(h), tc.routable)
			}
			for range 4 {
				resp := e.post(tc.path, testKey, tc.body)
				resp.Body.Close()
				want := 200
				if !tc.routable {
					want = 503
				}
				if resp.StatusCode != want {
					t.Fatalf("later call: %d, want %d", resp.StatusCode, want)
				}
			}
			got := up.sent()
			for _, k := range got {
				if !slices.Contains(tc.then, k) {
					t.Fatalf("later calls sent %q, want only %q", got, tc.then)
				}
			}
			if tc.routable && len(got) != 4 {
				t.Fatalf("later calls made %d upstream calls, want 4", len(got))
			}
		})
	}
}

func TestUsageRowNamesTheKeyOfEachAttempt(t *testing.T) {
	e := newEnv(t)
	_, srv := newKeyedUpstream(t)
	e.channel("multi", srv.URL, func(c *store.Channel) {
		c.Key = refusedKey + "\n" + acceptedKey
		c.Settings = map[string]any{"key_selection": "round_robin"}
	})
	resp := e.post("/v1/chat/completions", testKey, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`)
	resp.Body.Close()
	rows := e.rows(store.LogConsume)
	if len(rows) != 1 {
		t.Fatalf("rows %d", len(rows))
	}
	var other struct {
		Attempts []attemptRecord `json:"attempts"`
	}
	if err := json.Unmarshal(rows[0].Other, &other); err != nil {
		t.Fatal(err)
	}
	if len(other.Attempts) != 2 || other.Attempts[0].KeyIndex != 0 || other.Attempts[0].Status != 401 ||
		other.Attempts[1].KeyIndex != 1 || other.Attempts[1].Status != 200 {
		t.Fatalf("attempts %+v, want key 0 refused then key 1 served", other.Attempts)
	}
	if strings.Contains(string(rows[0].Other), refusedKey) || strings.Contains(string(rows[0].Other), acceptedKey) {
		t.Fatalf("the usage row quotes a key: %s", rows[0].Other)
	}
}

func TestAProbeSendsTheKeyItProbes(t *testing.T) {
	e := newEnv(t)
	up, srv := newKeyedUpstream(t)
	c := e.channel("multi", srv.URL, func(c *store.Channel) { c.Key = acceptedKey + "\n\n" + refusedKey + "\n" })
	cases := []struct {
		key  int
		sent string
		ok   bool
	}{{0, acceptedKey, true}, {1, refusedKey, false}}
	for _, tc := range cases {
		err := ProbeChannel(context.Background(), e.relay, c, tc.key)
		if (err == nil) != tc.ok {
			t.Fatalf("probe of key %d: %v", tc.key, err)
		}
		if got := up.sent(); !slices.Equal(got, []string{tc.sent}) {
			t.Fatalf("probe of key %d sent %q", tc.key, got)
		}
	}
	if err := ProbeChannel(context.Background(), e.relay, c, 2); err == nil || strings.Contains(err.Error(), acceptedKey) {
		t.Fatalf("probe of a key past the list: %v", err)
	}
}

func TestAStoredResponseIsAskedOfEachKeyUntilOneKnowsIt(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	var asked []string
	// The response belongs to the account of acceptedKey; the other
	// account does not know it.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		mu.Lock()
		asked = append(asked, key)
		mu.Unlock()
		if key != acceptedKey || r.URL.Path != "/v1/responses/resp_k" {
			w.WriteHeader(404)
			fmt.Fprint(w, `{"error":{"message":"Response not found.","type":"invalid_request_error"}}`)
			return
		}
		writeJSONString(w, respObject("resp_k", "m", ""))
	}))
	t.Cleanup(srv.Close)
	c := e.channel("multi", srv.URL, func(c *store.Channel) { c.Key = "sk-other-account-key\n" + acceptedKey })
	e.useResponseIndex()
	for _, id := range []string{"resp_k", "resp_gone"} {
		e.relay.Responses.Remember(t.Context(), id, c.ID, e.user.ID)
	}
	cases := []struct {
		id     string
		status int
	}{{"resp_k", 200}, {"resp_gone", 404}}
	for _, tc := range cases {
		mu.Lock()
		asked = nil
		mu.Unlock()
		resp := e.do(http.MethodGet, "/v1/responses/"+tc.id, testKey)
		resp.Body.Close()
		mu.Lock()
		got := asked
		mu.Unlock()
		if resp.StatusCode != tc.status || !slices.Equal(got, []string{"sk-other-account-key", acceptedKey}) {
			t.Fatalf("%s: status %d, keys asked %q", tc.id, resp.StatusCode, got)
		}
	}
}

func TestAnUpstreamErrorNeverCarriesAChannelKey(t *testing.T) {
	e := newEnv(t)
	up, srv := newKeyedUpstream(t)
	e.channel("multi", srv.URL, func(c *store.Channel) {
		c.Key = echoedKey + "\n" + acceptedKey + "\n"
		c.Settings = map[string]any{"key_selection": "round_robin"}
	})
	refused := 0
	for i := range 4 {
		// Each call its own conversation, so cache affinity does not pin
		// them all to the key that answered first.
		resp := e.post("/v1/chat/completions", testKey, fmt.Sprintf(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi %d"}]}`, i))
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(raw), echoedKey) {
			t.Fatalf("the answer quotes the channel key: %s", raw)
		}
		if resp.StatusCode == 400 {
			refused++
			if !strings.Contains(string(raw), "the request made with **** is malformed") {
				t.Fatalf("the upstream's message is lost: %s", raw)
			}
		}
	}
	// A 400 goes back to the client and does not take the key out: round
	// robin alternates.
	if refused != 2 || !slices.Equal(up.sent(), []string{echoedKey, acceptedKey, echoedKey, acceptedKey}) {
		t.Fatalf("%d refusals; want every other call refused by the echoing key", refused)
	}
	for _, row := range e.rows(store.LogError) {
		if strings.Contains(string(row.Other), echoedKey) {
			t.Fatalf("the error row quotes the channel key: %+v", row)
		}
	}
}
