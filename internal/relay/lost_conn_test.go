package relay

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// roundTripFunc is a transport made of one function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

const lostChatBody = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`

// When the gateway itself runs out of descriptors (or local ports), the
// channel did nothing wrong: the call ends with a 503 in its dialect that
// says so, and the channel stays in rotation however often it happens.
func TestTheGatewaysOwnShortageIsNotTheChannelsFailure(t *testing.T) {
	cases := []struct {
		name, path, body string
		errno            syscall.Errno
		// want is the error's code (OpenAI-style) or type (messages).
		want string
	}{
		{"chat: no descriptor left", "/v1/chat/completions", lostChatBody, syscall.EMFILE, "gateway_out_of_resources"},
		{"chat: the system's file table is full", "/v1/chat/completions", lostChatBody, syscall.ENFILE, "gateway_out_of_resources"},
		{"chat: no local port left", "/v1/chat/completions", lostChatBody, syscall.EADDRNOTAVAIL, "gateway_out_of_resources"},
		{"messages: no descriptor left", "/v1/messages", `{"model":"gpt-4o-mini","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
			syscall.EMFILE, "overloaded_error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			c := e.channel("only", "http://127.0.0.1:9", nil)
			e.relay.Client = &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", tc.errno)}
			})}
			for i := range 5 {
				req, _ := http.NewRequest(http.MethodPost, e.srv.URL+tc.path, stringsReader(tc.body))
				req.Header.Set("Authorization", "Bearer "+testKey)
				req.Header.Set("Anthropic-Version", "2023-06-01")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var m struct {
					Error struct{ Code, Type string }
				}
				_ = json.Unmarshal(raw, &m)
				if resp.StatusCode != http.StatusServiceUnavailable || (m.Error.Code != tc.want && m.Error.Type != tc.want) {
					t.Fatalf("call %d: %d %s, want a 503 with %s", i, resp.StatusCode, raw, tc.want)
				}
			}
			if st := e.router.Health.Status(c.ID, 0); st.State != routing.StateHealthy {
				t.Fatalf("the channel is %+v after the gateway's own shortage, want healthy", st)
			}
		})
	}
}

// h2cUpstream holds every chat call until the test closes its connections,
// or answers at once once answering is set.
type h2cUpstream struct {
	srv       *httptest.Server
	arrived   chan struct{}
	answering atomic.Bool
}

func newH2CUpstream(t *testing.T) *h2cUpstream {
	u := &h2cUpstream{arrived: make(chan struct{}, 64)}
	u.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		if u.answering.Load() {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"c","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,`+
				`"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
			return
		}
		u.arrived <- struct{}{}
		<-r.Context().Done()
	}))
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	u.srv.Config.Protocols = &p
	u.srv.Start()
	t.Cleanup(u.srv.Close)
	return u
}

// One HTTP/2 connection carries many calls; when the upstream closes it,
// all of them fail at once. That is one failure of the channel, not one
// per call: the only channel stays in rotation and serves the next call.
func TestAnHTTP2ConnectionLostUnderManyCallsDoesNotCoolTheChannel(t *testing.T) {
	e := newEnv(t)
	up := newH2CUpstream(t)
	c := e.channel("h2c", up.srv.URL, func(c *store.Channel) {
		c.Settings = map[string]any{"http2": upstream.HTTP2PriorKnowledge}
	})
	const calls = 8
	statuses := make(chan int, calls)
	var wg sync.WaitGroup
	for range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := e.post("/v1/chat/completions", testKey, lostChatBody)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	for range calls {
		<-up.arrived
	}
	up.srv.CloseClientConnections()
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != http.StatusBadGateway {
			t.Fatalf("a call whose connection was lost answered %d, want 502", s)
		}
	}
	if st := e.router.Health.Status(c.ID, 0); st.State != routing.StateHealthy {
		t.Fatalf("the channel is %+v after one lost connection, want healthy", st)
	}
	up.answering.Store(true)
	resp := e.post("/v1/chat/completions", testKey, lostChatBody)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the next call: %d %s, want 200 from the channel still in rotation", resp.StatusCode, raw)
	}
}
