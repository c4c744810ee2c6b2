package loadtest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRunGatewayHasTheFourthWaveConfiguredButUnusedByTheBenchKey(t *testing.T) {
	up := httptest.NewServer(NewUpstream(3, 0).Handler())
	defer up.Close()
	a, err := NewGateway(context.Background(), GatewayConfig(t.TempDir(), up.URL), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer CloseGateway(a)
	for _, path := range []string{"/api/orgs", "/api/teams", "/api/plans", "/api/guardrails", "/api/mcp/servers"} {
		out, err := adminCall(context.Background(), a.Handler, "GET", path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if items, _ := out["items"].([]any); len(items) != 1 {
			t.Errorf("%s lists %v, want the one the run configured", path, out)
		}
	}
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader((&phase{mode: Regular}).body()))
	req.Header.Set("Authorization", "Bearer "+BenchKey)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	a.Handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("bench call: %d %s", rec.Code, rec.Body.String())
	}
}
