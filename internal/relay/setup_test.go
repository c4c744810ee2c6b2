package relay

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/protocol/anthropic"
	"github.com/turnpike-gw/turnpike/internal/protocol/gemini"
	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
	"github.com/turnpike-gw/turnpike/internal/protocol/responses"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

const testKey = "sk-relay-test-key"

// env is a relay wired to a real SQLite store and billing, with a user
// (quota 10,000,000) and an unlimited key.
type env struct {
	t       *testing.T
	st      store.Store
	billing *billing.Service
	writer  *billing.Writer
	router  *routing.Router
	relay   *Relay
	srv     *httptest.Server
	user    *store.User
	token   *store.Token
}

func newEnv(t *testing.T, opts ...func(*Options)) *env {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.Open(ctx, sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	w := billing.NewWriter(st, log, 10*time.Millisecond, 512)
	b := billing.NewService(billing.NewMemoryBalances(st), w, 500000)
	e := &env{t: t, st: st, billing: b, writer: w, router: routing.NewRouter(routing.NewHealth(nil, nil))}
	u := &store.User{Username: "alice", Role: store.RoleUser, Group: "default", Status: store.StatusEnabled}
	if err := st.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Credit(ctx, billing.Credit{UserID: u.ID, Delta: 10_000_000, Note: "test"}); err != nil {
		t.Fatal(err)
	}
	tok := &store.Token{UserID: u.ID, Name: "k", KeyHash: auth.HashKey(testKey), KeyMasked: auth.MaskKey(testKey), Quota: -1, Status: store.StatusEnabled}
	if err := st.Tokens().Create(ctx, tok); err != nil {
		t.Fatal(err)
	}
	e.user, e.token = u, tok
	o := Options{RetryCount: 2, BodyLimit: 1 << 20, FirstByteTimeout: 2 * time.Second, UpstreamTimeout: 10 * time.Second}
	for _, f := range opts {
		f(&o)
	}
	e.relay = New(Deps{Keys: auth.NewKeys(st, time.Minute), Billing: b, Router: e.router, Client: &http.Client{},
		Codecs:   map[protocol.Format]protocol.Codec{protocol.OpenAI: openai.Chat, protocol.Anthropic: anthropic.Messages, protocol.Gemini: gemini.Generate},
		Embedder: gemini.Generate, TokenCounter: gemini.Generate, ResponsesAPI: responses.API, Completions: openai.Completions,
		Logger: log, Options: o})
	mux := http.NewServeMux()
	e.relay.Register(mux)
	e.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		e.srv.Close()
		if err := e.relay.Drain(context.Background()); err != nil {
			t.Error(err)
		}
		if err := w.Close(context.Background()); err != nil {
			t.Error(err)
		}
		st.Close()
	})
	e.price("gpt-4o-mini", store.ModelPrice{InputPerMTok: 0.15, OutputPerMTok: 0.60})
	return e
}

func (e *env) price(model string, p store.ModelPrice) {
	p.Name = model
	if err := e.st.Prices().Upsert(context.Background(), p); err != nil {
		e.t.Fatal(err)
	}
	if err := e.billing.Reload(context.Background(), e.st); err != nil {
		e.t.Fatal(err)
	}
}

// channel adds a channel pointing at url and rebuilds the routing table.
func (e *env) channel(name, url string, mod func(*store.Channel)) *store.Channel {
	c := &store.Channel{Name: name, Type: 1, BaseURL: url, Key: "upstream-secret-" + name, Models: []string{"gpt-4o-mini"},
		Groups: []string{"default"}, Weight: 1, Status: store.StatusEnabled}
	if mod != nil {
		mod(c)
	}
	ctx := context.Background()
	if err := e.st.Channels().Create(ctx, c); err != nil {
		e.t.Fatal(err)
	}
	all, err := e.st.Channels().All(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	e.router.Swap(routing.NewTable(all))
	return c
}

// flush makes queued ledger and log rows visible in the database.
func (e *env) flush() {
	if err := e.writer.Flush(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) balance() int64 {
	b, err := e.billing.Balances().User(context.Background(), e.user.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

func (e *env) post(path, key, body string) *http.Response {
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, stringsReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}
