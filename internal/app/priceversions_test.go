package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

const (
	pvRoot  = "root-price-versions"
	pvKey   = "sk-pv-ada"
	pvModel = "pv-model"
)

// pvUpstream answers every chat call with 1000 prompt and 1000 completion
// tokens, after checking it was sent the channel key and the model.
func pvUpstream(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Model string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		if r.Header.Get("Authorization") != "Bearer pv-upstream" || body.Model != pvModel {
			t.Errorf("upstream got key %q model %q", r.Header.Get("Authorization"), body.Model)
			http.Error(w, `{"error":{"message":"unexpected"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/embeddings") {
			fmt.Fprintf(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,0.25]}],"model":%q,"usage":{"prompt_tokens":1000,"total_tokens":1000}}`, pvModel)
			return
		}
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":1000,"total_tokens":2000}}`, pvModel)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// pvSeed prices pvModel at $1 per million tokens in and out: a call of
// 2000 tokens costs 1000 quota units at version 1.
func pvSeed(upstream string) []testkit.Option {
	weight := 1
	return []testkit.Option{
		testkit.WithRootToken(pvRoot),
		testkit.WithUsers(config.SeedUser{Username: "ada", Password: "ada-pass", Role: "user", Group: "default", Quota: 10_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "ada-key", User: "ada", Key: pvKey}),
		testkit.WithChannels(config.SeedChannel{Name: "pv", Type: "openai", BaseURL: upstream, Key: "pv-upstream",
			Models: []string{pvModel}, Groups: []string{"default"}, Weight: &weight}),
		testkit.WithModels(map[string]config.SeedPrice{pvModel: {InputPerMTok: 1, OutputPerMTok: 1}}),
	}
}

func pvChat(t *testing.T, g *testkit.Gateway) {
	t.Helper()
	body := map[string]any{"model": pvModel, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	if code, ans := g.Do(t, "POST", "/v1/chat/completions", pvKey, body); code != http.StatusOK {
		t.Fatalf("chat: %d %v", code, ans)
	}
}

// pvRows waits for n consume rows and answers each one's quota and
// other.price_version, oldest first.
func pvRows(t *testing.T, g *testkit.Gateway, n int) (quotas, versions []float64) {
	t.Helper()
	testkit.WaitFor(10*time.Second, 20*time.Millisecond, func() bool {
		_, body := g.Do(t, "GET", "/api/logs?type=consume&page_size=100&model="+url.QueryEscape(pvModel), pvRoot, nil)
		items, _ := body["items"].([]any)
		quotas, versions = quotas[:0], versions[:0]
		for i := len(items) - 1; i >= 0; i-- {
			row, _ := items[i].(map[string]any)
			other, _ := row["other"].(map[string]any)
			q, _ := row["quota"].(float64)
			v, _ := other["price_version"].(float64)
			quotas, versions = append(quotas, q), append(versions, v)
		}
		return len(items) >= n
	})
	if len(quotas) != n {
		t.Fatalf("%d consume rows, want %d", len(quotas), n)
	}
	return quotas, versions
}

// pvEmbed embeds one input: 1000 prompt tokens, 500 units at version 1.
func pvEmbed(t *testing.T, g *testkit.Gateway) {
	t.Helper()
	if code, ans := g.Do(t, "POST", "/v1/embeddings", pvKey, map[string]any{"model": pvModel, "input": "hi"}); code != http.StatusOK {
		t.Fatalf("embeddings: %d %v", code, ans)
	}
}

func TestAPriceChangeBetweenTwoCallsChargesEachAtItsOwnVersion(t *testing.T) {
	g := testkit.Start(t, pvSeed(pvUpstream(t).URL)...)
	pvChat(t, g)
	pvEmbed(t, g)
	if code, ans := g.Do(t, "PUT", "/api/models/"+pvModel, pvRoot, map[string]any{"input_per_mtok": 2, "output_per_mtok": 2}); code != 200 || ans["version"] != float64(2) {
		t.Fatalf("new price: %d %v", code, ans)
	}
	pvChat(t, g)
	pvEmbed(t, g)
	quotas, versions := pvRows(t, g, 4)
	want := []float64{1000, 500, 2000, 1000}
	for i, v := range []float64{1, 1, 2, 2} {
		if quotas[i] != want[i] || versions[i] != v {
			t.Fatalf("quotas %v at versions %v, want %v at 1, 1, 2, 2 (chat and embeddings each side of the change)", quotas, versions, want)
		}
	}
	_, hist := g.Do(t, "GET", "/api/models/"+pvModel+"/history", pvRoot, nil)
	items, _ := hist["items"].([]any)
	if len(items) != 2 || items[1].(map[string]any)["source"] != "seed" || items[0].(map[string]any)["source"] != "api" {
		t.Fatalf("history %v", hist)
	}
}

func TestAFuturePriceStartsOnTwoNodesTogether(t *testing.T) {
	a, b := twoNodes(t, pvSeed(pvUpstream(t).URL)...)
	switchAt := time.Now().Add(4 * time.Second).UTC()
	code, ans := a.Do(t, "PUT", "/api/models/"+pvModel, pvRoot,
		map[string]any{"input_per_mtok": 2, "output_per_mtok": 2, "effective_from": switchAt.Format(time.RFC3339Nano)})
	if code != 200 || ans["version"] != float64(2) {
		t.Fatalf("future price: %d %v", code, ans)
	}
	// Node B learns of the change as of any price change: announced on
	// Redis when there is one, else by its price revision check (2 s).
	// Nothing tells it anything at the switch itself.
	if !testkit.WaitFor(3*time.Second, 10*time.Millisecond, func() bool {
		p, err := b.App.Billing.PriceAt(pvModel, switchAt)
		return err == nil && p.Version == 2
	}) {
		t.Fatal("node B does not know the future price 3 s after it was set")
	}
	pvChat(t, a)
	pvChat(t, b)
	if time.Now().After(switchAt) {
		t.Skip("the machine is too slow to call both nodes before the switch")
	}
	time.Sleep(time.Until(switchAt) + 10*time.Millisecond)
	pvChat(t, a)
	pvChat(t, b)
	quotas, versions := pvRows(t, a, 4)
	want := []float64{1000, 1000, 2000, 2000}
	for i := range want {
		if quotas[i] != want[i] || versions[i] != want[i]/1000 {
			t.Fatalf("quotas %v at versions %v, want %v at 1, 1, 2, 2", quotas, versions, want)
		}
	}
}
