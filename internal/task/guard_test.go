package task

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/task/tasktest"
)

type fixedGuards struct{ set *guardrail.Set }

func (f fixedGuards) Set() *guardrail.Set { return f.set }

// guardEnv is the task core with one guardrail and a vendor that records
// what it was sent.
func guardEnv(t *testing.T, spec guardrail.Spec) (*coreEnv, func() []string) {
	t.Helper()
	set, err := guardrail.NewSet([]guardrail.Spec{spec}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &coreEnv{t: t, plugin: tasktest.LoadPlugin(t, "pertask.js")}
	e.gens = tasktest.NewGenerations([]*plugin.Loaded{e.plugin})
	e.World = tasktest.Open(t, sqlitetest.Path(t))
	t.Cleanup(e.Close)
	e.svc = New(Deps{Store: e.Store, Billing: e.Billing, Router: e.Router, Generations: e.gens, Client: &http.Client{}, Logger: e.Log,
		Guardrails: fixedGuards{set},
		Options:    Options{PollInterval: time.Hour, MaxFailures: 3, Timeout: time.Hour, RetryCount: 2, UpstreamTimeout: 5 * time.Second, Node: "node-a"}})
	e.alice = e.User("alice", aliceKey, 1_000_000)
	e.Price(store.ModelPrice{Name: "acme-v1", Extra: json.RawMessage(`{"per_unit":{"seconds":0.01}}`)})
	var mu sync.Mutex
	var sent []string
	vendor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		sent = append(sent, string(b))
		mu.Unlock()
		_, _ = w.Write([]byte(`{"id":"job-1"}`))
	}))
	t.Cleanup(vendor.Close)
	e.Channel("acme-main", "acme", vendor.URL, []string{"acme-v1"}, nil)
	return e, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), sent...) }
}

func (e *coreEnv) submitBody(body string) (*Submitted, error) {
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
	return e.svc.Submit(ctx, Submission{Header: http.Header{}, Generation: e.gens.Current(), Plugin: e.plugin, Principal: p,
		Model: "acme-v1", Action: "generate", Body: v, Headers: map[string]any{}, Files: []any{}, Retain: true})
}

const cardVideo = `{"model":"acme-v1","prompt":"a receipt showing card 4111 1111 1111 1111","seconds":2,"image_url":"https://img.test/AKIAIOSFODNN7EXAMPLE.png"}`

func TestGuardrailBlockedTaskCostsNothingAndReachesNoVendor(t *testing.T) {
	e, sent := guardEnv(t, guardrail.Spec{Name: "no-cards", Type: guardrail.TypePII})
	_, err := e.submitBody(cardVideo)
	if ie := ir.As(err); err == nil || ie.Status != 400 || ie.Code != "guardrail_blocked" || !strings.Contains(ie.Message, "no-cards") || strings.Contains(ie.Message, "4111") {
		t.Fatalf("submit = %v", err)
	}
	if n := len(sent()); n != 0 {
		t.Fatalf("the vendor got %d submits", n)
	}
	if q := e.Quota(e.alice); q != 1_000_000 {
		t.Fatalf("quota moved to %d", q)
	}
	if n := len(e.Logs(e.alice, store.LogConsume)); n != 0 {
		t.Fatalf("%d consume rows", n)
	}
	rows := e.Logs(e.alice, store.LogError)
	if len(rows) != 1 || rows[0].Quota != 0 || !strings.Contains(string(rows[0].Other), `"card":1`) || strings.Contains(string(rows[0].Other), "4111") {
		t.Fatalf("error rows %+v", rows)
	}
}

func TestGuardrailRedactedTaskPromptReachesTheVendorRedacted(t *testing.T) {
	e, sent := guardEnv(t, guardrail.Spec{Name: "mask", Type: guardrail.TypePII, Config: json.RawMessage(`{"action":"redact"}`)})
	out, err := e.submitBody(cardVideo)
	if err != nil {
		t.Fatal(err)
	}
	got := sent()
	if len(got) != 1 || strings.Contains(got[0], "4111") || !strings.Contains(got[0], "[REDACTED:card]") {
		t.Fatalf("vendor got %q", got)
	}
	rows := e.Logs(e.alice, store.LogConsume)
	if len(rows) != 1 || !strings.Contains(string(rows[0].Other), `"guardrails":[{"name":"mask"`) {
		t.Fatalf("consume rows %+v (task %s)", rows, out.Task.PublicID)
	}
}

func TestGuardrailReadsOnlyATaskBodysPromptMembers(t *testing.T) {
	// The image address holds a key's shape; it is not a prompt.
	e, sent := guardEnv(t, guardrail.Spec{Name: "keys", Type: guardrail.TypeSecrets})
	if _, err := e.submitBody(cardVideo); err != nil {
		t.Fatalf("submit = %v", err)
	}
	if len(sent()) != 1 {
		t.Fatal("the vendor got nothing")
	}
}

// A guardrail attached to a team checks the submissions of its members
// only (the principal carries the team).
func TestATeamGuardrailChecksItsMembersSubmissionsOnly(t *testing.T) {
	e, sent := guardEnv(t, guardrail.Spec{Name: "team-cards", Type: guardrail.TypePII, AppliesTo: guardrail.Scope{Teams: []int64{77}}})
	for _, c := range []struct {
		team    int64
		blocked bool
	}{{team: 77, blocked: true}, {team: 78}, {team: 0}} {
		p, err := e.Keys.Authenticate(context.Background(), aliceKey)
		if err != nil {
			t.Fatal(err)
		}
		member := *p
		member.TeamID = c.team
		v, err := DecodeJSON([]byte(cardVideo))
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.svc.Submit(context.Background(), Submission{Header: http.Header{}, Generation: e.gens.Current(), Plugin: e.plugin, Principal: &member,
			Model: "acme-v1", Action: "generate", Body: v, Headers: map[string]any{}, Files: []any{}, Retain: true})
		if got := ir.As(err) != nil && ir.As(err).Code == "guardrail_blocked"; got != c.blocked {
			t.Errorf("team %d: submit = %v, blocked %v, want %v", c.team, err, got, c.blocked)
		}
	}
	if n := len(sent()); n != 2 {
		t.Errorf("the vendor saw %d submissions, want the two from outside the team", n)
	}
}
