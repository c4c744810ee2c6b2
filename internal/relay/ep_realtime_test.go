package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// fakeRealtime is an upstream realtime socket. It checks the channel key
// and the mapped model, records what it receives, and obeys commands:
// "bill" answers a response.done with usage, "burst" sends 100 numbered
// frames, "close-me" closes with code 4001.
type fakeRealtime struct {
	key    string
	mu     sync.Mutex
	frames []string
	binary [][]byte
	beta   string
	// closed receives the close code the gateway sent.
	closed chan websocket.StatusCode
	// answerCancel: a response.cancel is answered with the response's
	// response.done, as the provider does.
	answerCancel bool
	// cancelAt and closedAt are when the response.cancel and the end of
	// the socket came, as the upstream saw them.
	cancelAt, closedAt time.Time
}

// partialText is what the "partial" command streams before the client leaves.
var partialText = []string{strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20), "And then it stopped."}

const realtimeDone = `{"type":"response.done","event_id":"ev_1","response":{"id":"resp_rt","object":"realtime.response","status":"completed","usage":{"total_tokens":1500,"input_tokens":1000,"output_tokens":500,"input_token_details":{"cached_tokens":0,"text_tokens":200,"audio_tokens":800},"output_token_details":{"text_tokens":100,"audio_tokens":400}}}}`

// realtimeLateDone reports a large input, as a long conversation has.
const realtimeLateDone = `{"type":"response.done","response":{"id":"resp_late","status":"completed","usage":{"total_tokens":100500,"input_tokens":100000,"output_tokens":500}}}`

func newFakeRealtime(t *testing.T, f *fakeRealtime) *httptest.Server {
	f.closed = make(chan websocket.StatusCode, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+f.key {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}`)
			return
		}
		if r.URL.Path != "/v1/realtime" || r.URL.Query().Get("model") != "gpt-realtime-mapped" {
			w.WriteHeader(404)
			fmt.Fprintf(w, `{"error":{"message":"no model %s at %s","type":"invalid_request_error","code":"model_not_found"}}`, r.URL.Query().Get("model"), r.URL.Path)
			return
		}
		f.mu.Lock()
		f.beta = r.Header.Get("OpenAI-Beta")
		f.mu.Unlock()
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		f.serve(r.Context(), c)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (f *fakeRealtime) serve(ctx context.Context, c *websocket.Conn) {
	for {
		typ, data, err := c.Read(ctx)
		if err != nil {
			f.mu.Lock()
			f.closedAt = time.Now()
			f.mu.Unlock()
			f.sawClose(websocket.CloseStatus(err))
			return
		}
		f.mu.Lock()
		if typ == websocket.MessageBinary {
			f.binary = append(f.binary, data)
		} else {
			f.frames = append(f.frames, string(data))
		}
		f.mu.Unlock()
		switch string(data) {
		case "bill":
			_ = c.Write(ctx, websocket.MessageText, []byte(realtimeDone))
		case "burst":
			for i := 0; i < 100; i++ {
				_ = c.Write(ctx, websocket.MessageText, []byte(fmt.Sprintf("u-%d", i)))
			}
		case "partial":
			// A response under way that never completes.
			_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.created","response":{"id":"resp_part"}}`))
			for _, d := range partialText {
				_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.output_text.delta","response_id":"resp_part","delta":"`+d+`"}`))
			}
		case "partial-then-done":
			// A response whose response.done comes after the client left.
			_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.created","response":{"id":"resp_late"}}`))
			_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.output_text.delta","response_id":"resp_late","delta":"Hello"}`))
			time.Sleep(300 * time.Millisecond)
			_ = c.Write(ctx, websocket.MessageText, []byte(realtimeLateDone))
		case "partial-until-cancel":
			_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.created","response":{"id":"resp_late"}}`))
			_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.output_text.delta","response_id":"resp_late","delta":"Hello"}`))
		case "partial-audio":
			_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.created","response":{"id":"resp_audio"}}`))
			_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.output_audio.delta","response_id":"resp_audio","delta":"UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="}`))
		case `{"type":"response.cancel"}`:
			f.mu.Lock()
			f.cancelAt = time.Now()
			f.mu.Unlock()
			if f.answerCancel {
				_ = c.Write(ctx, websocket.MessageText, []byte(realtimeLateDone))
			}
		case "close-me":
			_ = c.Close(4001, "upstream says bye")
			f.sawClose(4001)
			return
		}
	}
}

// sawClose reports a close without ever blocking the session's goroutine.
func (f *fakeRealtime) sawClose(code websocket.StatusCode) {
	select {
	case f.closed <- code:
	default:
	}
}

func (f *fakeRealtime) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.frames...)
}

// realtimeChannel serves gpt-4o-mini as gpt-realtime-mapped on a fake
// realtime upstream.
func (e *env) realtimeChannel(f *fakeRealtime) *store.Channel {
	up := newFakeRealtime(e.t, f)
	ch := e.channel("rt", up.URL, func(c *store.Channel) {
		c.ModelMapping = map[string]string{"gpt-4o-mini": "gpt-realtime-mapped"}
	})
	f.key = ch.Key
	// Sessions outlive their handler's HTTP bookkeeping; end them before
	// the environment closes the billing writer, as the app does.
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.relay.CloseRealtime(ctx); err != nil {
			e.t.Errorf("realtime sessions did not end: %v", err)
		}
	})
	return ch
}

// realtimeSession opens a session on a new realtime channel and returns it
// with the balance before it.
func (e *env) realtimeSession() (*websocket.Conn, int64) {
	e.t.Helper()
	e.realtimeChannel(&fakeRealtime{})
	before := e.balance()
	c, _, err := e.dialRealtime("gpt-4o-mini", bearer(testKey))
	if err != nil {
		e.t.Fatal(err)
	}
	return c, before
}

// endRealtime waits until every session has ended and settled.
func (e *env) endRealtime() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.relay.CloseRealtime(ctx); err != nil {
		e.t.Fatalf("realtime sessions did not end: %v", err)
	}
}

func (e *env) dialRealtime(model string, opts *websocket.DialOptions) (*websocket.Conn, *http.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return websocket.Dial(ctx, e.srv.URL+"/v1/realtime?model="+model, opts)
}

func bearer(key string) *websocket.DialOptions {
	return &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + key}}}
}

func readText(t *testing.T, c *websocket.Conn) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, data, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return string(data)
}

func write(t *testing.T, c *websocket.Conn, typ websocket.MessageType, s string) {
	t.Helper()
	if err := c.Write(context.Background(), typ, []byte(s)); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func TestRealtimeRelaysFramesInOrderBothWays(t *testing.T) {
	e := newEnv(t)
	f := &fakeRealtime{}
	e.realtimeChannel(f)
	c, _, err := e.dialRealtime("gpt-4o-mini", bearer(testKey))
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	for i := 0; i < 100; i++ {
		write(t, c, websocket.MessageText, fmt.Sprintf("c-%d", i))
	}
	write(t, c, websocket.MessageBinary, "\x00\x01audio")
	write(t, c, websocket.MessageText, "burst")
	for i := 0; i < 100; i++ {
		if got, want := readText(t, c), fmt.Sprintf("u-%d", i); got != want {
			t.Fatalf("frame %d from upstream is %q, want %q", i, got, want)
		}
	}
	got := f.received()
	if len(got) != 101 {
		t.Fatalf("upstream got %d text frames", len(got))
	}
	for i := 0; i < 100; i++ {
		if got[i] != fmt.Sprintf("c-%d", i) {
			t.Fatalf("frame %d to upstream is %q", i, got[i])
		}
	}
	f.mu.Lock()
	binary := f.binary
	f.mu.Unlock()
	if len(binary) != 1 || string(binary[0]) != "\x00\x01audio" {
		t.Fatalf("binary frames %q", binary)
	}
}

func TestRealtimeTakesTheKeyAsASubprotocolAndSelectsRealtime(t *testing.T) {
	e := newEnv(t)
	f := &fakeRealtime{}
	e.realtimeChannel(f)
	c, _, err := e.dialRealtime("gpt-4o-mini", &websocket.DialOptions{
		Subprotocols: []string{"realtime", "openai-insecure-api-key." + testKey, "openai-beta.realtime-v1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if c.Subprotocol() != "realtime" {
		t.Fatalf("subprotocol %q", c.Subprotocol())
	}
	write(t, c, websocket.MessageText, "burst")
	if got := readText(t, c); got != "u-0" {
		t.Fatalf("first frame %q", got)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.beta != "realtime=v1" {
		t.Errorf("beta header %q", f.beta)
	}
}

func TestRealtimeBillsEveryResponseDone(t *testing.T) {
	e := newEnv(t)
	f := &fakeRealtime{}
	e.realtimeChannel(f)
	before := e.balance()
	c, _, err := e.dialRealtime("gpt-4o-mini", bearer(testKey))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		write(t, c, websocket.MessageText, "bill")
		if got := readText(t, c); !strings.Contains(got, `"response.done"`) {
			t.Fatalf("frame %q", got)
		}
	}
	_ = c.Close(websocket.StatusNormalClosure, "")
	e.endRealtime()
	if charged := before - e.balance(); charged != 2*chargeFor1000x500 {
		t.Fatalf("charged %d, want %d", charged, 2*chargeFor1000x500)
	}
	e.flush()
	logs, _, err := e.st.Logs().List(context.Background(), store.LogFilter{Type: store.LogConsume}, store.Page{})
	if err != nil || len(logs) != 2 {
		t.Fatalf("%d consume rows, %v", len(logs), err)
	}
	row, other := e.lastConsume()
	if row.PromptTokens != 1000 || row.CompletionTokens != 500 || row.Quota != chargeFor1000x500 ||
		other["endpoint"] != "realtime" || other["output_audio_tokens"] != 400.0 || other["response_id"] != "resp_rt" {
		t.Fatalf("row %+v other %v", row, other)
	}
}

func TestRealtimeClosesWithPolicyViolationWhenQuotaRunsOut(t *testing.T) {
	e := newEnv(t)
	f := &fakeRealtime{}
	e.realtimeChannel(f)
	// 400 covers the 375 reserved at connect but not the next reservation
	// after a 225 charge.
	if _, err := e.billing.TopUp(context.Background(), e.user.ID, 400-e.balance(), "test"); err != nil {
		t.Fatal(err)
	}
	c, _, err := e.dialRealtime("gpt-4o-mini", bearer(testKey))
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	write(t, c, websocket.MessageText, "bill")
	readText(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _, err = c.Read(ctx)
	var ce websocket.CloseError
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation || !asClose(err, &ce) || !strings.Contains(ce.Reason, "quota") {
		t.Fatalf("read after exhaustion: %v", err)
	}
	select {
	case <-f.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream socket stayed open")
	}
	e.endRealtime()
	if b := e.balance(); b != 400-chargeFor1000x500 {
		t.Fatalf("balance %d, want %d", b, 400-chargeFor1000x500)
	}
}

func TestRealtimeClosePropagatesBothWays(t *testing.T) {
	e := newEnv(t)
	f := &fakeRealtime{}
	e.realtimeChannel(f)
	c, _, err := e.dialRealtime("gpt-4o-mini", bearer(testKey))
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close(websocket.StatusNormalClosure, "done")
	select {
	case code := <-f.closed:
		if code != websocket.StatusNormalClosure {
			t.Fatalf("upstream saw close %d", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the client's close did not reach the upstream")
	}

	// A client that vanishes without a close frame still ends the upstream.
	c, _, err = e.dialRealtime("gpt-4o-mini", bearer(testKey))
	if err != nil {
		t.Fatal(err)
	}
	_ = c.CloseNow()
	select {
	case code := <-f.closed:
		if code != websocket.StatusGoingAway {
			t.Fatalf("upstream saw close %d after the client vanished", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the vanished client's upstream stayed open")
	}

	c, _, err = e.dialRealtime("gpt-4o-mini", bearer(testKey))
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	write(t, c, websocket.MessageText, "close-me")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _, err = c.Read(ctx)
	var ce websocket.CloseError
	if !asClose(err, &ce) || ce.Code != 4001 || ce.Reason != "upstream says bye" {
		t.Fatalf("client saw %v", err)
	}
}

func asClose(err error, ce *websocket.CloseError) bool { return errors.As(err, ce) }

func TestRealtimeMovesToTheNextChannelWhenOneRefusesTheGatewaysKey(t *testing.T) {
	e := newEnv(t)
	broken := &fakeRealtime{}
	up := newFakeRealtime(t, broken)
	broken.key = "not-the-channel-key"
	e.channel("broken", up.URL, func(c *store.Channel) { c.Priority = 10 })
	f := &fakeRealtime{}
	e.realtimeChannel(f)
	c, _, err := e.dialRealtime("gpt-4o-mini", bearer(testKey))
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	write(t, c, websocket.MessageText, "burst")
	if got := readText(t, c); got != "u-0" {
		t.Fatalf("first frame %q", got)
	}
}

func TestRealtimeRefusesTheUpgradeWithOpenAIErrors(t *testing.T) {
	e := newEnv(t)
	f := &fakeRealtime{}
	e.realtimeChannel(f)
	restricted := "sk-restricted"
	tok := &store.Token{UserID: e.user.ID, Name: "r", KeyHash: auth.HashKey(restricted), KeyMasked: auth.MaskKey(restricted),
		Quota: -1, Status: store.StatusEnabled, Models: []string{"other-model"}}
	if err := e.st.Tokens().Create(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, model string
		opts        *websocket.DialOptions
		status      int
	}{
		{"wrong key", "gpt-4o-mini", bearer("sk-wrong"), 401},
		{"no key", "gpt-4o-mini", nil, 401},
		{"unknown model", "no-such-model", bearer(testKey), 404},
		{"no model", "", bearer(testKey), 400},
		{"model not allowed for the key", "gpt-4o-mini", bearer(restricted), 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, resp, err := e.dialRealtime(tc.model, tc.opts)
			if err == nil {
				c.CloseNow()
				t.Fatal("the upgrade was accepted")
			}
			if resp == nil || resp.StatusCode != tc.status {
				t.Fatalf("response %v, err %v", resp, err)
			}
			body, _ := io.ReadAll(resp.Body)
			if !strings.Contains(string(body), `"error":{"message":`) {
				t.Fatalf("body %s", body)
			}
		})
	}
}
