package mcpgw_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

const (
	root       = "root-mcp-test"
	keyAlice   = "sk-mcp-alice-0001"
	keyBob     = "sk-mcp-bob-00001"
	keyNone    = "sk-mcp-nogrant-01"
	upSecret   = "up-secret-value-123"
	aliceQuota = 10_000_000
)

// env is a gateway with two registered tool servers, alpha and beta.
type env struct {
	gw          *testkit.Gateway
	alpha, beta *fakeTools
	ids         map[string]int64 // server name or key name -> id
}

func newEnv(t testing.TB, opts ...testkit.Option) *env {
	t.Helper()
	unlimited := int64(-1)
	e := &env{alpha: startFake(t, "alpha", upSecret), beta: startFake(t, "beta", upSecret), ids: map[string]int64{}}
	opts = append([]testkit.Option{testkit.WithRootToken(root), testkit.WithGroups(map[string]float64{"default": 1, "half": 0.5}),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "alice-password", Role: "user", Group: "half", Quota: aliceQuota},
			config.SeedUser{Username: "bob", Password: "bob-password", Role: "user", Group: "default", Quota: aliceQuota}),
		testkit.WithTokens(config.SeedToken{Name: "alice-key", User: "alice", Key: keyAlice, Quota: &unlimited},
			config.SeedToken{Name: "bob-key", User: "bob", Key: keyBob, Quota: &unlimited},
			config.SeedToken{Name: "none-key", User: "bob", Key: keyNone, Quota: &unlimited})}, opts...)
	e.gw = testkit.Start(t, opts...)
	for _, f := range []*fakeTools{e.alpha, e.beta} {
		status, body := e.gw.Do(t, "POST", "/api/mcp/servers", root, map[string]any{"name": f.name, "url": f.srv.URL,
			"headers": map[string]string{"Authorization": "Bearer " + upSecret}, "timeout_seconds": 2, "price_per_call_usd": 0.002})
		if status != 200 {
			t.Fatalf("register %s: %d %v", f.name, status, body)
		}
		e.ids[f.name] = int64(body["id"].(float64))
	}
	_, list := e.gw.Do(t, "GET", "/api/tokens?page_size=100", root, nil)
	for _, it := range list["items"].([]any) {
		tk := it.(map[string]any)
		e.ids[tk["name"].(string)] = int64(tk["id"].(float64))
	}
	return e
}

func (e *env) grant(t testing.TB, keyName string, grant any) {
	t.Helper()
	status, body := e.gw.Do(t, "PATCH", fmt.Sprintf("/api/tokens/%d", e.ids[keyName]), root, map[string]any{"mcp": grant})
	if status != 200 {
		t.Fatalf("grant %s: %d %v", keyName, status, body)
	}
}

func rpcCode(err error) int64 {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

func TestAKeyListsAndCallsOnlyWhatItsGrantAllows(t *testing.T) {
	e := newEnv(t)
	e.grant(t, "alice-key", map[string]any{"servers": []string{"alpha"}, "tools": []string{"alpha__echo", "slow"}})
	e.grant(t, "bob-key", map[string]any{"servers": []any{"*"}})

	cs := connect(t, e.gw.URL+"/mcp", keyAlice, nil)
	if got := toolNames(t, cs); !slices.Equal(got, []string{"alpha__echo", "alpha__slow"}) {
		t.Fatalf("alice lists %v, want only alpha__echo and alpha__slow", got)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || textOf(res) != "alpha: hi" {
		t.Fatalf("alpha__echo = %v, %v", res, err)
	}
	for _, name := range []string{"alpha__fail", "beta__echo", "echo", "gamma__echo"} {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if rpcCode(err) != jsonrpc.CodeInvalidParams {
			t.Errorf("%s outside the grant: %v, want a -32602 error", name, err)
		}
	}
	if calls, _, _ := e.beta.snapshot(); len(calls) != 0 {
		t.Errorf("beta was called for a key without a grant of it: %v", calls)
	}

	bob := connect(t, e.gw.URL+"/mcp", keyBob, nil)
	if got := toolNames(t, bob); len(got) != 8 {
		t.Errorf("a grant of every server lists every tool of both: %v", got)
	}
	none := connect(t, e.gw.URL+"/mcp", keyNone, nil)
	if got := toolNames(t, none); len(got) != 0 {
		t.Errorf("a key without a grant lists %v, want nothing (deny by default)", got)
	}

	own := connect(t, e.gw.URL+"/mcp/alpha", keyAlice, nil)
	if got := toolNames(t, own); !slices.Equal(got, []string{"echo", "slow"}) {
		t.Errorf("/mcp/alpha lists %v, want the tools under their own names", got)
	}
	if status, _, _ := rawRPC(t, e.gw.URL+"/mcp/beta", keyAlice, "", "initialize", initParams); status != http.StatusForbidden {
		t.Errorf("/mcp/beta for a key without beta: %d, want 403", status)
	}
	if status, _, _ := rawRPC(t, e.gw.URL+"/mcp/nosuch", keyAlice, "", "initialize", initParams); status != http.StatusNotFound {
		t.Errorf("/mcp/nosuch: %d, want 404", status)
	}
	if status, _, _ := rawRPC(t, e.gw.URL+"/mcp", "sk-not-a-key", "", "initialize", initParams); status != http.StatusUnauthorized {
		t.Errorf("a wrong key: %d, want 401", status)
	}
	for _, f := range []*fakeTools{e.alpha, e.beta} {
		if _, problems, _ := f.snapshot(); len(problems) > 0 {
			t.Errorf("%s: %v", f.name, problems)
		}
	}
}

func TestAUserGrantCoversItsKeysAndAKeyGrantNarrowsIt(t *testing.T) {
	e := newEnv(t)
	_, me := e.gw.Do(t, "GET", fmt.Sprintf("/api/tokens/%d", e.ids["bob-key"]), root, nil)
	userID := int64(me["user_id"].(float64))
	status, body := e.gw.Do(t, "PATCH", fmt.Sprintf("/api/users/%d", userID), root, map[string]any{"mcp": map[string]any{"servers": []any{e.ids["beta"]}}})
	if status != 200 || body["mcp"] == nil {
		t.Fatalf("user grant by server id: %d %v", status, body)
	}
	if got := toolNames(t, connect(t, e.gw.URL+"/mcp", keyNone, nil)); len(got) != 4 || !strings.HasPrefix(got[0], "beta__") {
		t.Errorf("a key of a user granted beta lists %v, want beta's four tools", got)
	}
	e.grant(t, "none-key", map[string]any{"servers": []string{"beta", "alpha"}, "tools": []string{"beta__echo"}})
	if got := toolNames(t, connect(t, e.gw.URL+"/mcp", keyNone, nil)); !slices.Equal(got, []string{"beta__echo"}) {
		t.Errorf("a key grant narrows its user's: %v, want [beta__echo] (alpha is not the user's)", got)
	}
}

func TestEachToolCallIsBilledAtItsPriceAndAFailedUpstreamIsRefunded(t *testing.T) {
	e := newEnv(t)
	e.grant(t, "alice-key", map[string]any{"servers": []string{"alpha", "beta"}})
	cs := connect(t, e.gw.URL+"/mcp", keyAlice, nil)
	ctx := context.Background()
	for i := range 3 {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": fmt.Sprint(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "beta__fail", Arguments: map[string]any{}})
	if err != nil || !res.IsError {
		t.Fatalf("a tool error is a result with isError: %v %v", res, err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "explode"}})
	if err == nil || !strings.Contains(err.Error(), "alpha") {
		t.Fatalf("an upstream outage is an error naming the server, got %v", err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "beta__hang", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "beta") || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("a timed-out upstream is an error naming the server, got %v", err)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "beta__echo", Arguments: map[string]any{"text": "still"}}); err != nil || textOf(res) != "beta: still" {
		t.Fatalf("after a timeout the server keeps working: %v %v", res, err)
	}

	// 0.002 USD × 500000 units per USD × group ratio 0.5 = 500 a call; five
	// answered calls (the tool error included), two refunded.
	const perCall = 500
	userID := aliceUser(t, e)
	st := e.gw.App.Store
	if err := e.gw.App.Writer.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	rows, _, err := st.Logs().List(ctx, store.LogFilter{UserID: userID}, store.Page{Page: 1, PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	var consumed, errorsSeen int
	for _, r := range rows {
		if r.Type != store.LogConsume && r.Type != store.LogError {
			continue // the seed's top-up
		}
		var o struct {
			MCP struct {
				Server, Tool string
				IsError      bool `json:"is_error"`
				MS           *int64
			} `json:"mcp"`
		}
		_ = json.Unmarshal(r.Other, &o)
		if !strings.HasPrefix(r.Model, "mcp:") || o.MCP.Server == "" || r.Model != "mcp:"+o.MCP.Server || o.MCP.MS == nil {
			t.Errorf("row %d: model %q other %s", r.ID, r.Model, r.Other)
		}
		switch r.Type {
		case store.LogConsume:
			consumed++
			if r.Quota != perCall || o.MCP.IsError != (o.MCP.Tool == "fail") {
				t.Errorf("consume row %s/%s: quota %d is_error %v, want %d", o.MCP.Server, o.MCP.Tool, r.Quota, o.MCP.IsError, perCall)
			}
		case store.LogError:
			errorsSeen++
		}
	}
	if consumed != 5 || errorsSeen != 2 {
		t.Errorf("%d consume and %d error rows, want 5 and 2", consumed, errorsSeen)
	}
	_, u := e.gw.Do(t, "GET", fmt.Sprintf("/api/users/%d", userID), root, nil)
	if got := int64(u["quota"].(float64)); got != aliceQuota-5*perCall {
		t.Errorf("balance %d, want %d: each answered call charged once, failures refunded", got, aliceQuota-5*perCall)
	}
}

func aliceUser(t *testing.T, e *env) int64 {
	t.Helper()
	_, tk := e.gw.Do(t, "GET", fmt.Sprintf("/api/tokens/%d", e.ids["alice-key"]), root, nil)
	return int64(tk["user_id"].(float64))
}

func TestRateLimitsCountToolCallsOnly(t *testing.T) {
	e := newEnv(t)
	e.grant(t, "alice-key", map[string]any{"servers": []string{"alpha"}})
	if status, body := e.gw.Do(t, "PATCH", fmt.Sprintf("/api/tokens/%d", e.ids["alice-key"]), root, map[string]any{"rpm": 2}); status != 200 {
		t.Fatalf("rpm: %d %v", status, body)
	}
	cs := connect(t, e.gw.URL+"/mcp", keyAlice, nil)
	for range 4 {
		toolNames(t, cs)
	}
	ctx := context.Background()
	for i := range 2 {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "x"}}); err != nil {
			t.Fatalf("call %d within the limit (listing counts nothing): %v", i, err)
		}
	}
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "x"}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || !strings.Contains(string(we.Data), `"status":429`) {
		t.Fatalf("the third call in a minute with rpm 2: %v, want a refusal carrying status 429", err)
	}
	if calls, _, _ := e.alpha.snapshot(); len(calls) != 2 {
		t.Errorf("the refused call reached the upstream: %v", calls)
	}
}

func TestProgressIsRelayedAndPingAnsweredByTheGateway(t *testing.T) {
	e := newEnv(t)
	e.grant(t, "alice-key", map[string]any{"servers": []string{"alpha"}})
	progress := make(chan string, 4)
	cs := connect(t, e.gw.URL+"/mcp", keyAlice, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		progress <- fmt.Sprintf("%v/%v %s", r.Params.Progress, r.Params.Total, r.Params.Message)
	}})
	if err := cs.Ping(context.Background(), nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	params := &mcp.CallToolParams{Name: "alpha__slow", Arguments: map[string]any{}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || textOf(res) != "done" {
		t.Fatalf("slow: %v %v", res, err)
	}
	var got []string
	for len(got) < 2 {
		select {
		case p := <-progress:
			got = append(got, p)
		case <-time.After(2 * time.Second):
			t.Fatalf("progress relayed: %v, want two notifications", got)
		}
	}
	if got[0] != "1/2 step 1" || got[1] != "2/2 step 2" {
		t.Errorf("progress %v", got)
	}
}

func TestAnUnknownProtocolVersionIsA4xx(t *testing.T) {
	e := newEnv(t)
	e.grant(t, "alice-key", map[string]any{"servers": []string{"alpha"}})
	_, h, _ := rawRPC(t, e.gw.URL+"/mcp", keyAlice, "", "initialize", initParams)
	req, _ := http.NewRequest(http.MethodPost, e.gw.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+keyAlice)
	req.Header.Set("Mcp-Session-Id", h.Get("Mcp-Session-Id"))
	req.Header.Set("Mcp-Protocol-Version", "2099-01-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a request in version 2099-01-01: %d, want 400", resp.StatusCode)
	}
	status, _, body := rawRPC(t, e.gw.URL+"/mcp", keyAlice, "", "initialize", map[string]any{"protocolVersion": "2099-01-01",
		"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}})
	res, _ := body["result"].(map[string]any)
	if status != 200 || res["protocolVersion"] != "2025-11-25" {
		t.Errorf("initialize offering a newer version: %d %v, want the newest the gateway speaks", status, body)
	}
}
