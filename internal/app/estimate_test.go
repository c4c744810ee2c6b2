package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// openHold waits for the one open hold in the database (the call is held
// up at the upstream meanwhile) and answers its amount.
func openHold(t *testing.T, g *testkit.Gateway) int64 {
	t.Helper()
	var amount int64
	ok := testkit.WaitFor(5*time.Second, 10*time.Millisecond, func() bool {
		holds, err := g.App.Store.Holds().List(context.Background())
		if err != nil || len(holds) != 1 {
			return false
		}
		amount = holds[0].Amount
		return true
	})
	if !ok {
		t.Fatal("no open hold in the database while the call waits at the upstream")
	}
	return amount
}

// heldUpstream is pvUpstream that answers a call only once told to, so the
// call's hold can be read while it is open.
func heldUpstream(t *testing.T, release <-chan struct{}) string {
	inner := pvUpstream(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		inner.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestTheEstimateEqualsTheHoldTheGatewayThenTakes(t *testing.T) {
	release := make(chan struct{})
	opts := append(pvSeed(heldUpstream(t, release)),
		testkit.WithGroups(map[string]float64{"default": 1.5}),
		testkit.WithModels(map[string]config.SeedPrice{pvModel: {InputPerMTok: 1.25, OutputPerMTok: 10, PerCall: 0.001}}))
	g := testkit.Start(t, opts...)
	long := "count these words please, every one of them, twice over and again"
	cases := []struct {
		name, format, path string
		body               map[string]any
		header             map[string]string
		maxOut             int
	}{
		{"openai with max_tokens", "openai", "/v1/chat/completions",
			map[string]any{"model": pvModel, "max_tokens": 300, "messages": []any{map[string]any{"role": "user", "content": long}}}, nil, 300},
		{"openai with the default output bound", "", "/v1/chat/completions",
			map[string]any{"model": pvModel, "messages": []any{map[string]any{"role": "system", "content": "be brief"}, map[string]any{"role": "user", "content": long}}}, nil, 1024},
		{"messages", "messages", "/v1/messages",
			map[string]any{"model": pvModel, "max_tokens": 77, "messages": []any{map[string]any{"role": "user", "content": long}}},
			map[string]string{"anthropic-version": "2023-06-01"}, 77},
		{"gemini", "gemini", "/v1beta/models/" + pvModel + ":generateContent",
			map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": long}}}},
				"generationConfig": map[string]any{"maxOutputTokens": 55}}, nil, 55},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, est := g.Do(t, "POST", "/api/pricing/estimate", pvKey, map[string]any{"model": pvModel, "format": tc.format, "body": tc.body})
			if code != http.StatusOK {
				t.Fatalf("estimate: %d %v", code, est)
			}
			if est["model"] != pvModel || est["price_version"] != float64(1) || est["max_output_tokens"] != float64(tc.maxOut) {
				t.Errorf("estimate %v", est)
			}
			in, _ := est["input_tokens"].(float64)
			hold, least, most := est["hold_quota"].(float64), est["min_quota"].(float64), est["max_quota"].(float64)
			// min: the prompt at $1.25/M plus the $0.001 call, × 500000 × 1.5.
			if want := float64(int64(in*1.25*0.75 + 750 + 0.5)); in <= 0 || least != want {
				t.Errorf("min_quota %v for %v input tokens, want %v", least, in, want)
			}
			if !(least < most && most <= hold) || est["min_usd"] != least/500000 || est["max_usd"] != most/500000 {
				t.Errorf("estimate out of order: %v", est)
			}
			req, _ := http.NewRequest("POST", g.URL+tc.path, strings.NewReader(mustJSON(tc.body)))
			req.Header.Set("Authorization", "Bearer "+pvKey)
			req.Header.Set("x-goog-api-key", pvKey)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			type result struct {
				status int
				err    error
			}
			done := make(chan result, 1)
			go func() {
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					done <- result{err: err}
					return
				}
				resp.Body.Close()
				done <- result{status: resp.StatusCode}
			}()
			got := openHold(t, g)
			release <- struct{}{}
			if r := <-done; r.err != nil || r.status != 200 {
				t.Fatalf("call: %d %v", r.status, r.err)
			}
			if float64(got) != hold {
				t.Fatalf("the gateway held %d, the estimate said %v", got, hold)
			}
			testkit.WaitFor(5*time.Second, 10*time.Millisecond, func() bool {
				holds, err := g.App.Store.Holds().List(context.Background())
				return err == nil && len(holds) == 0
			})
		})
	}
}

func TestTheEstimateAnswersInTheAPIErrorShape(t *testing.T) {
	g := testkit.Start(t, pvSeed(pvUpstream(t).URL)...)
	body := map[string]any{"model": pvModel, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	cases := []struct {
		name, key string
		in        map[string]any
		status    int
		code      string
	}{
		{"no key", "", map[string]any{"body": body}, 401, "unauthorized"},
		{"an unknown format", pvKey, map[string]any{"format": "xml", "body": body}, 400, "invalid_field"},
		{"no body", pvKey, map[string]any{"model": pvModel}, 400, "invalid_field"},
		{"an unpriced model", pvKey, map[string]any{"model": "other", "body": body}, 404, "model_not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, ans := g.Do(t, "POST", "/api/pricing/estimate", tc.key, tc.in)
			e, _ := ans["error"].(map[string]any)
			if code != tc.status || e == nil || e["code"] != tc.code || e["message"] == "" {
				t.Fatalf("%d %v, want %d with code %s", code, ans, tc.status, tc.code)
			}
		})
	}
}

func TestASignedInUserGetsAnEstimateAtItsGroupRatio(t *testing.T) {
	opts := append(pvSeed(pvUpstream(t).URL), testkit.WithGroups(map[string]float64{"default": 2}))
	g := testkit.Start(t, opts...)
	cookie := g.Login(t, "ada", "ada-pass")
	body := `{"model":"` + pvModel + `","body":{"model":"` + pvModel + `","max_tokens":1000,"messages":[{"role":"user","content":"hi"}]}}`
	code, raw := browserRequest{method: "POST", path: "/api/pricing/estimate", body: body, contentType: "application/json", cookie: true}.send(t, g, cookie, "")
	var est map[string]any
	if err := json.Unmarshal([]byte(raw), &est); code != 200 || err != nil {
		t.Fatalf("estimate as a session: %d %s", code, raw)
	}
	// 1000 output tokens at $1/M, × 500000 × 2, on top of the prompt.
	if most, least := est["max_quota"].(float64), est["min_quota"].(float64); most-least != 1000 {
		t.Fatalf("max − min = %v, want the 1000 output tokens at ratio 2 (1000 units): %s", most-least, raw)
	}
}
