package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// catalogueModels are priced at $1 per million tokens in and out; the
// catalogue below lowers one output price (a change), raises one input
// price tenfold (suspicious) and lists a model the gateway does not price.
var catalogueModels = map[string]config.SeedPrice{
	"cat-a": {InputPerMTok: 1, OutputPerMTok: 1},
	"cat-b": {InputPerMTok: 1, OutputPerMTok: 1},
}

const perTokenCatalogue = `{
  "sample_spec": {"input_cost_per_token": 0, "mode": "chat"},
  "cat-a": {"input_cost_per_token": 1e-06, "output_cost_per_token": 5e-07, "cache_read_input_token_cost": 5e-07, "litellm_provider": "openai"},
  "cat-b": {"input_cost_per_token": 1e-05, "output_cost_per_token": 1e-06},
  "cat-new": {"input_cost_per_token": 2e-06, "output_cost_per_token_batches": 1e-06}
}`

// catalogueServer serves perTokenCatalogue and counts the fetches.
func catalogueServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, perTokenCatalogue)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func catalogueGateway(t *testing.T, change func(*config.Config)) *testkit.Gateway {
	return testkit.Start(t, testkit.WithRootToken(pvRoot), testkit.WithModels(catalogueModels), testkit.WithConfig(change))
}

func TestCataloguePreviewAndApply(t *testing.T) {
	srv, _ := catalogueServer(t)
	g := catalogueGateway(t, func(c *config.Config) { c.AllowPrivateContent = true })
	var cat any
	if err := json.Unmarshal([]byte(perTokenCatalogue), &cat); err != nil {
		t.Fatal(err)
	}

	code, prev := g.Do(t, "POST", "/api/models/catalogue/preview", pvRoot, map[string]any{"catalogue": cat, "models": []string{"cat-new"}})
	if code != 200 {
		t.Fatalf("preview: %d %v", code, prev)
	}
	changed, _ := prev["changed"].([]any)
	suspicious, _ := prev["suspicious"].([]any)
	added, _ := prev["added"].([]any)
	if len(changed) != 2 || len(suspicious) != 1 || len(added) != 1 || prev["unchanged"] != float64(0) {
		t.Fatalf("preview %v", prev)
	}
	if s := suspicious[0].(map[string]any); s["model"] != "cat-b" || s["field"] != "input_per_mtok" || s["old"] != float64(1) || s["new"] != float64(10) || s["ratio"] != float64(10) {
		t.Errorf("suspicious %v", s)
	}

	// The same catalogue by address, applied without accepting: the
	// suspicious change is held back, the others become versions.
	code, applied := g.Do(t, "POST", "/api/models/catalogue/apply", pvRoot, map[string]any{"url": srv.URL + "/prices.json", "models": []string{"cat-new"}})
	if code != 200 {
		t.Fatalf("apply: %d %v", code, applied)
	}
	if held, _ := applied["held_back"].([]any); len(held) != 1 {
		t.Fatalf("apply held back %v", applied["held_back"])
	}
	if vs, _ := applied["versions"].([]any); len(vs) != 2 {
		t.Fatalf("apply wrote versions %v, want cat-a and cat-new", applied["versions"])
	}
	for model, want := range map[string]map[string]any{
		"cat-a":   {"version": float64(2), "output_per_mtok": 0.5, "cache_read_per_mtok": 0.5, "input_per_mtok": float64(1)},
		"cat-b":   {"version": float64(1), "input_per_mtok": float64(1)},
		"cat-new": {"version": float64(1), "input_per_mtok": float64(2), "batch_output_per_mtok": float64(1)},
	} {
		_, p := g.Do(t, "GET", "/api/models/"+model, pvRoot, nil)
		for k, v := range want {
			if p[k] != v {
				t.Errorf("%s.%s = %v, want %v", model, k, p[k], v)
			}
		}
	}
	_, hist := g.Do(t, "GET", "/api/models/cat-a/history", pvRoot, nil)
	if items, _ := hist["items"].([]any); len(items) != 2 || items[0].(map[string]any)["source"] != "catalogue" || items[0].(map[string]any)["actor"] != "root-token" {
		t.Fatalf("cat-a history %v", hist)
	}
	if _, err := g.App.Billing.Price("cat-new"); err != nil {
		t.Errorf("billing does not price the added model: %v", err)
	}

	// Accepting the suspicious change applies it too.
	code, applied = g.Do(t, "POST", "/api/models/catalogue/apply", pvRoot, map[string]any{"catalogue": cat, "accept_suspicious": true})
	if code != 200 {
		t.Fatalf("apply accepting: %d %v", code, applied)
	}
	if _, p := g.Do(t, "GET", "/api/models/cat-b", pvRoot, nil); p["input_per_mtok"] != float64(10) || p["source"] != "catalogue" {
		t.Errorf("cat-b after accepting: %v", p)
	}
	// Nothing is left to change.
	if _, prev := g.Do(t, "POST", "/api/models/catalogue/preview", pvRoot, map[string]any{"catalogue": cat}); prev["unchanged"] != float64(3) {
		t.Errorf("preview after applying %v", prev)
	}
}

func TestCatalogueExportReadsBack(t *testing.T) {
	g := catalogueGateway(t, func(*config.Config) {})
	code, export := g.Do(t, "GET", "/api/models/catalogue", pvRoot, nil)
	if code != 200 || export["format"] != "turnpike" {
		t.Fatalf("export: %d %v", code, export)
	}
	_, prev := g.Do(t, "POST", "/api/models/catalogue/preview", pvRoot, map[string]any{"catalogue": export})
	if prev["unchanged"] != float64(2) || len(prev["changed"].([]any)) != 0 {
		t.Fatalf("the export previewed against itself: %v", prev)
	}
}

func TestCatalogueRequestsAreCheckedAndRootOnly(t *testing.T) {
	srv, fetched := catalogueServer(t)
	g := testkit.Start(t, testkit.WithRootToken(pvRoot), testkit.WithModels(catalogueModels),
		testkit.WithUsers(config.SeedUser{Username: "adm", Password: "adm-pass", Role: "admin", Group: "default"}))
	cookie := g.Login(t, "adm", "adm-pass")
	cases := []struct {
		name   string
		body   map[string]any
		status int
		code   string
	}{
		{"a loopback address is refused without allow_private_content", map[string]any{"url": srv.URL}, 400, "invalid_field"},
		{"a file address is refused", map[string]any{"url": "file:///etc/passwd"}, 400, "invalid_field"},
		{"both sources", map[string]any{"url": srv.URL, "catalogue": map[string]any{}}, 400, "invalid_request"},
		{"no source", map[string]any{}, 400, "invalid_request"},
		{"a catalogue that is not an object", map[string]any{"catalogue": []int{1}}, 400, "invalid_catalogue"},
		{"a ratio of one", map[string]any{"catalogue": map[string]any{}, "max_change_ratio": 1}, 400, "invalid_field"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, ans := g.Do(t, "POST", "/api/models/catalogue/preview", pvRoot, tc.body)
			e, _ := ans["error"].(map[string]any)
			if code != tc.status || e == nil || e["code"] != tc.code {
				t.Fatalf("%d %v, want %d %s", code, ans, tc.status, tc.code)
			}
		})
	}
	if n := fetched.Load(); n != 0 {
		t.Errorf("the refused address was fetched %d times", n)
	}
	body := `{"catalogue":{}}`
	if code, _ := (browserRequest{method: "POST", path: "/api/models/catalogue/apply", body: body, contentType: "application/json", cookie: true}).send(t, g, cookie, ""); code != http.StatusForbidden {
		t.Errorf("an admin applied a catalogue: %d", code)
	}
	if code, _ := (browserRequest{method: "GET", path: "/api/models/catalogue", cookie: true}).send(t, g, cookie, ""); code != http.StatusOK {
		t.Errorf("an admin cannot export: %d", code)
	}
}

func TestTheCatalogueScheduleAlertsOnceAndNeverApplies(t *testing.T) {
	srv, fetched := catalogueServer(t)
	hook := &hookReceiver{t: t, secret: "hook-secret"}
	hs := httptest.NewServer(hook)
	t.Cleanup(hs.Close)
	g := catalogueGateway(t, func(c *config.Config) {
		c.AllowPrivateContent = true
		c.PriceCatalogue = config.PriceCatalogue{URL: srv.URL + "/prices.json", IntervalHours: 0.1 / 3600} // every 100 ms
		c.Notify = config.Notify{WebhookURL: hs.URL, Secret: "hook-secret"}
	})
	if !testkit.WaitFor(5*time.Second, 20*time.Millisecond, func() bool { return fetched.Load() >= 3 && len(hook.received()) >= 1 }) {
		t.Fatalf("%d fetches, events %v", fetched.Load(), hook.received())
	}
	events := hook.received()
	if len(events) != 1 || hook.badSig.Load() != 0 {
		t.Fatalf("events %v (bad signatures %d), want one: the same difference is announced once", events, hook.badSig.Load())
	}
	ev := events[0]
	if ev["event"] != "price_catalogue_changed" || ev["changed"] != float64(2) || ev["suspicious"] != float64(1) {
		t.Fatalf("event %v", ev)
	}
	for _, m := range []string{"cat-a", "cat-b"} {
		if _, h := g.Do(t, "GET", "/api/models/"+m+"/history", pvRoot, nil); h["total"] != float64(1) {
			t.Errorf("%s was changed by the schedule: %v", m, h)
		}
	}
}
