package task

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/task/tasktest"
)

// coreEnv is the task core without its HTTP surface: the pertask.js plugin
// on one channel to a vendor that accepts every job, and a user "alice"
// (quota 1,000,000) whose key submits through Submit directly.
type coreEnv struct {
	*tasktest.World
	t      *testing.T
	plugin *plugin.Loaded
	gens   *tasktest.Generations
	svc    *Service
	alice  int64
}

const aliceKey = "sk-task-core-key-0001"

func newCoreEnv(t *testing.T) *coreEnv {
	t.Helper()
	e := &coreEnv{t: t, plugin: tasktest.LoadPlugin(t, "pertask.js")}
	e.gens = tasktest.NewGenerations([]*plugin.Loaded{e.plugin})
	e.World = tasktest.Open(t, sqlitetest.Path(t))
	t.Cleanup(e.Close)
	e.svc = New(Deps{Store: e.Store, Billing: e.Billing, Router: e.Router, Generations: e.gens, Client: &http.Client{}, Logger: e.Log,
		Options: Options{PollInterval: time.Millisecond, MaxFailures: 3, Timeout: time.Hour, RetryCount: 2, UpstreamTimeout: 5 * time.Second, Node: "node-a"}})
	e.alice = e.User("alice", aliceKey, 1_000_000)
	e.Price(store.ModelPrice{Name: "acme-v1", Extra: json.RawMessage(`{"per_unit":{"seconds":0.01}}`)})
	vendor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"id":"job-1"}`))
	}))
	t.Cleanup(vendor.Close)
	e.Channel("acme-main", "acme", vendor.URL, []string{"acme-v1"}, nil)
	return e
}

// submitVideo submits body as alice, the way POST /acme/v1/videos decodes
// it, and returns the task's public id.
func (e *coreEnv) submitVideo(body string) string {
	e.t.Helper()
	ctx := context.Background()
	p, err := e.Keys.Authenticate(ctx, aliceKey)
	if err != nil {
		e.t.Fatal(err)
	}
	v, err := DecodeJSON([]byte(body))
	if err != nil {
		e.t.Fatal(err)
	}
	out, err := e.svc.Submit(ctx, Submission{Header: http.Header{}, Generation: e.gens.Current(), Plugin: e.plugin, Principal: p,
		Model: "acme-v1", Action: "generate", Body: v, Headers: map[string]any{}, Files: []any{}, Retain: true})
	if err != nil {
		e.t.Fatalf("submit: %v", err)
	}
	return out.Task.PublicID
}

func (e *coreEnv) task(publicID string) *Task {
	t, err := e.svc.Store().GetPublic(context.Background(), publicID)
	if err != nil {
		e.t.Fatal(err)
	}
	return t
}
