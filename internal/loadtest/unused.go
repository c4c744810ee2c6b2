package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/config"
)

// The fourth wave's capabilities are configured in every run's gateway
// but used by none of the bench calls: a capability that is configured
// and not used by a call must cost that call nothing, and a run without
// them would not show it if it did.
const (
	// benchRootToken is the loopback gateway's root token, used only to
	// create the unused configuration below.
	benchRootToken = "bench-root-token-not-for-production"
	otherUser      = "bench-other"
	otherGroup     = "other"
	// otherModel is a priced model no bench call asks for.
	otherModel = "bench-model-other"
)

// withUnusedCapabilities adds to cfg what ConfigureUnused needs: a root
// token, a second group and a user in it, and a model no call asks for.
func withUnusedCapabilities(cfg *config.Config) {
	cfg.RootToken = benchRootToken
	cfg.Seed.Groups[otherGroup] = 1
	cfg.Seed.Users = append(cfg.Seed.Users, config.SeedUser{Username: otherUser, Password: "bench-password",
		Role: "user", Group: otherGroup, Quota: 1 << 40})
	cfg.Models[otherModel] = config.SeedPrice{InputPerMTok: 0.15, OutputPerMTok: 0.6}
}

// ConfigureUnused creates, through the administration API of the gateway
// handler h, an organisation and a shared-billing team holding the other
// user, a plan covering the bench model granted to that user, a pii
// guardrail applied to the other group and a registered MCP server. The
// bench user and key stay outside all of them. (The response cache is on
// the -cached model from the seed.)
func ConfigureUnused(ctx context.Context, h http.Handler) error {
	steps := []struct {
		method, path string
		body         map[string]any
		keep         string
	}{
		{"POST", "/api/orgs", map[string]any{"name": "bench-org", "period_quota": 1 << 40, "period": "month", "rpm": 100000}, "org"},
		{"POST", "/api/teams", map[string]any{"name": "bench-team", "org_id": "{org}", "billing": "shared", "concurrency": 1000}, "team"},
		{"PATCH", "/api/users/{other}", map[string]any{"team_id": "{team}"}, ""},
		{"POST", "/api/plans", map[string]any{"name": "bench-plan", "price_usd": 20, "period": "month",
			"windows": []map[string]any{{"hours": 5, "quota": 1 << 30}}, "models": []string{BenchModel}, "priority": 1}, "plan"},
		{"POST", "/api/users/{other}/plans", map[string]any{"plan_id": "{plan}"}, ""},
		{"POST", "/api/guardrails", map[string]any{"name": "bench-pii", "type": "pii", "stages": []string{"request", "response"},
			"applies_to": map[string]any{"groups": []string{otherGroup}}}, ""},
		// Port 9 (discard) on loopback: registered, never asked.
		{"POST", "/api/mcp/servers", map[string]any{"name": "bench-mcp", "url": "http://127.0.0.1:9/mcp", "tools": []string{"echo"}}, ""},
	}
	ids := map[string]int64{}
	other, err := userID(ctx, h, otherUser)
	if err != nil {
		return err
	}
	ids["other"] = other
	for _, s := range steps {
		out, err := adminCall(ctx, h, s.method, expand(s.path, ids), expandBody(s.body, ids))
		if err != nil {
			return err
		}
		if s.keep != "" {
			id, _ := out["id"].(float64)
			ids[s.keep] = int64(id)
		}
	}
	return nil
}

func userID(ctx context.Context, h http.Handler, name string) (int64, error) {
	out, err := adminCall(ctx, h, "GET", "/api/users?page_size=100", nil)
	if err != nil {
		return 0, err
	}
	items, _ := out["items"].([]any)
	for _, it := range items {
		if u, _ := it.(map[string]any); u["username"] == name {
			id, _ := u["id"].(float64)
			return int64(id), nil
		}
	}
	return 0, fmt.Errorf("user %s not seeded", name)
}

// expand replaces {name} in s by the id kept under name.
func expand(s string, ids map[string]int64) string {
	for k, v := range ids {
		s = strings.ReplaceAll(s, "{"+k+"}", strconv.FormatInt(v, 10))
	}
	return s
}

func expandBody(body map[string]any, ids map[string]int64) map[string]any {
	out := make(map[string]any, len(body))
	for k, v := range body {
		if s, ok := v.(string); ok && len(s) > 2 && s[0] == '{' {
			if id, ok := ids[s[1:len(s)-1]]; ok {
				out[k] = id
				continue
			}
		}
		out[k] = v
	}
	return out
}

func adminCall(ctx context.Context, h http.Handler, method, path string, body map[string]any) (map[string]any, error) {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return nil, err
		}
	}
	req := httptest.NewRequestWithContext(ctx, method, path, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+benchRootToken)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	out := map[string]any{}
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	if rec.Code/100 != 2 {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, rec.Code, rec.Body.String())
	}
	return out, nil
}
