package admin

import (
	"net/http"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
)

// guardrailEnv is the admin env with a live guardrail engine.
func guardrailEnv(t *testing.T) (*env, *guardrail.Engine) {
	e := newEnv(t)
	engine := guardrail.NewEngine(guardrail.StoreSource{Repo: e.d.Store.Guardrails()}, nil, nil)
	e.d.Guardrails = GuardrailDeps{Engine: engine}
	e.api = New(e.d)
	e.mux = http.NewServeMux()
	e.api.Register(e.mux)
	return e, engine
}

func TestGuardrailAdministration(t *testing.T) {
	e, engine := guardrailEnv(t)
	e.run([]scenario{
		{name: "only root", who: "admin", method: "GET", path: "/api/guardrails", status: 403},
		{name: "create", who: "root", method: "POST", path: "/api/guardrails",
			body:   `{"name":"no-cards","type":"pii","config":{"action":"redact","kinds":["card"]},"applies_to":{"groups":["default"]}}`,
			status: 200, want: map[string]any{"name": "no-cards", "mode": "enforce", "config.action": "redact"},
			check: func(t *testing.T, _ *env, r response) {
				if engine.Set().Len() != 1 {
					t.Fatal("the live set was not rebuilt")
				}
				if st := r.body["stages"].([]any); len(st) != 2 {
					t.Fatalf("stages default %v", st)
				}
			}},
		{name: "a taken name", who: "root", method: "POST", path: "/api/guardrails", body: `{"name":"no-cards","type":"secrets"}`, status: 409},
		{name: "every problem listed", who: "root", method: "POST", path: "/api/guardrails",
			body: `{"name":"bad","type":"regex","mode":"sometimes","config":{"patterns":["(x"]}}`, status: 400,
			check: func(t *testing.T, _ *env, r response) {
				msg := r.raw
				if !strings.Contains(msg, "mode") || !strings.Contains(msg, "patterns[0]") {
					t.Fatalf("message %s", msg)
				}
			}},
		{name: "unknown member", who: "root", method: "POST", path: "/api/guardrails", body: `{"name":"x","type":"pii","level":3}`, status: 400},
		{name: "get by name", who: "root", method: "GET", path: "/api/guardrails/no-cards", status: 200, want: map[string]any{"type": "pii"}},
		{name: "patch to monitor", who: "root", method: "PATCH", path: "/api/guardrails/no-cards", body: `{"mode":"monitor"}`, status: 200,
			want: map[string]any{"mode": "monitor", "config.action": "redact", "name": "no-cards"}},
		{name: "list", who: "root", method: "GET", path: "/api/guardrails", status: 200, want: map[string]any{"total": float64(1)}},
		{name: "dry run of an unsaved definition", who: "root", method: "POST", path: "/api/guardrails/dry-run",
			body:   `{"text":"pay with 4111 1111 1111 1111 or mail a@b.io","guardrail":{"name":"t","type":"pii","config":{"action":"redact"}}}`,
			status: 200, want: map[string]any{"blocked": false, "redacted": true, "text": "pay with [REDACTED:card] or mail [REDACTED:email]"}},
		{name: "dry run that blocks names the guardrail", who: "root", method: "POST", path: "/api/guardrails/dry-run",
			body:   `{"text":"key AKIAIOSFODNN7EXAMPLE","stage":"response","guardrail":{"name":"keys","type":"secrets"}}`,
			status: 200, want: map[string]any{"blocked": true, "blocked_by": "keys"},
			check: func(t *testing.T, _ *env, r response) {
				recs := r.body["guardrails"].([]any)
				if len(recs) != 1 || recs[0].(map[string]any)["matches"].(map[string]any)["aws_key"] != float64(1) {
					t.Fatalf("records %v", recs)
				}
			}},
		{name: "dry run needs text", who: "root", method: "POST", path: "/api/guardrails/dry-run", body: `{"stage":"request"}`, status: 400},
		{name: "delete", who: "root", method: "DELETE", path: "/api/guardrails/no-cards", status: 200,
			check: func(t *testing.T, _ *env, _ response) {
				if engine.Set().Len() != 0 {
					t.Fatal("the deleted guardrail is still live")
				}
			}},
		{name: "gone", who: "root", method: "GET", path: "/api/guardrails/no-cards", status: 404},
	})
}
