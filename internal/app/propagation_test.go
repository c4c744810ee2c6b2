package app_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/kv"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/testdb"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// openRedis connects to the test Redis at raw until t ends.
func openRedis(t *testing.T, raw string) kv.Client {
	t.Helper()
	rdb, _, err := kv.Open(raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// TestAdminChangesReachTheOtherNodeWithinTwoSeconds runs two gateways on
// one PostgreSQL database and one Redis and measures, for each kind of
// administrative change made on node A, how long node B takes to act on it.
// The figures are logged (go test -v) and recorded in docs/OPERATIONS.md.
func TestAdminChangesReachTheOtherNodeWithinTwoSeconds(t *testing.T) {
	pg, rd := os.Getenv("TURNPIKE_TEST_POSTGRES"), os.Getenv("TURNPIKE_TEST_REDIS")
	if pg == "" || rd == "" {
		t.Skip("set TURNPIKE_TEST_POSTGRES and TURNPIKE_TEST_REDIS to measure propagation between two nodes")
	}
	dsn, rurl := testdb.Postgres(t, pg), freshRedis(t, rd)
	up := slowUpstream(t, 0)
	weight := 1
	seed := []testkit.Option{
		testkit.WithRootToken("root-secret"),
		testkit.WithConfig(func(c *config.Config) { c.Database, c.Redis = dsn, rurl }),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "pw-longer", Group: "default", Quota: 100_000_000},
			config.SeedUser{Username: "bob", Password: "pw-longer", Group: "default", Quota: 100_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "k1", User: "alice", Key: "sk-prop-k1"},
			config.SeedToken{Name: "k2", User: "alice", Key: "sk-prop-k2"},
			config.SeedToken{Name: "kb", User: "bob", Key: "sk-prop-kb"}),
		testkit.WithChannels(config.SeedChannel{Name: "c", Type: "openai", BaseURL: up.URL, Key: "k", Models: []string{"m", "m3"}, Weight: &weight},
			config.SeedChannel{Name: "c2", Type: "openai", BaseURL: up.URL, Key: "k", Models: []string{"m2"}, Weight: &weight}),
		testkit.WithModels(map[string]config.SeedPrice{"m": {InputPerMTok: 1}, "m2": {InputPerMTok: 1}, "m3": {InputPerMTok: 1}}),
	}
	a := testkit.Start(t, seed...)
	b := testkit.Start(t, seed...)
	call := func(key, model string) int {
		resp := post(t, b.URL+"/v1/chat/completions", map[string]string{"Authorization": "Bearer " + key},
			`{"model":"`+model+`","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct{ key, model string }{{"sk-prop-k1", "m"}, {"sk-prop-kb", "m"}, {"sk-prop-k1", "m2"}, {"sk-prop-k1", "m3"}} {
		if code := call(c.key, c.model); code != 200 { // also warms node B's key cache
			t.Fatalf("%s on %s before any change: %d", c.key, c.model, code)
		}
	}
	ctx := context.Background()
	alice, _ := a.App.Store.Users().GetByUsername(ctx, "alice")
	bob, _ := a.App.Store.Users().GetByUsername(ctx, "bob")
	k1, _ := a.App.Store.Tokens().GetByName(ctx, alice.ID, "k1")
	k2, _ := a.App.Store.Tokens().GetByName(ctx, alice.ID, "k2")
	c2, _ := a.App.Store.Channels().GetByName(ctx, "c2")
	src, err := os.ReadFile("../task/testdata/pertask.js")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		what   string
		change func() (int, map[string]any)
		seen   func() bool
	}{
		{"key disabled", func() (int, map[string]any) {
			return a.Do(t, "PATCH", fmt.Sprintf("/api/tokens/%d", k1.ID), "root-secret", map[string]any{"status": "disabled"})
		}, func() bool { return call("sk-prop-k1", "m") == http.StatusForbidden }},
		{"user disabled", func() (int, map[string]any) {
			return a.Do(t, "PATCH", fmt.Sprintf("/api/users/%d", bob.ID), "root-secret", map[string]any{"status": "disabled"})
		}, func() bool { return call("sk-prop-kb", "m") == http.StatusForbidden }},
		{"channel disabled", func() (int, map[string]any) {
			return a.Do(t, "PATCH", fmt.Sprintf("/api/channels/%d", c2.ID), "root-secret", map[string]any{"status": "disabled"})
		}, func() bool { return call("sk-prop-k2", "m2") != http.StatusOK }},
		{"price removed", func() (int, map[string]any) {
			return a.Do(t, "DELETE", "/api/models/m3", "root-secret", nil)
		}, func() bool { return call("sk-prop-k2", "m3") != http.StatusOK }},
		{"group limits", func() (int, map[string]any) {
			return a.Do(t, "PUT", "/api/groups/default", "root-secret", map[string]any{"ratio": 1, "rpm": 1000})
		}, func() bool { return b.App.Limits.GetSubject(store.SubjectGroup, "default").RPM == 1000 }},
		{"key limits", func() (int, map[string]any) {
			return a.Do(t, "PATCH", fmt.Sprintf("/api/tokens/%d", k2.ID), "root-secret", map[string]any{"rpm": 77})
		}, func() bool { return b.App.Limits.Get(store.SubjectToken, k2.ID).RPM == 77 }},
		{"plugin installed", func() (int, map[string]any) {
			return a.Do(t, "POST", "/api/plugin/task", "root-secret", map[string]any{"source": string(src)})
		}, func() bool { return b.App.PluginRevision() == a.App.PluginRevision() }},
	}
	for _, c := range cases {
		code, body := c.change()
		if code/100 != 2 {
			t.Fatalf("%s on node A: %d %v", c.what, code, body)
		}
		start := time.Now()
		if !testkit.WaitFor(5*time.Second, 10*time.Millisecond, c.seen) {
			t.Errorf("%s: node B did not see it within 5 s", c.what)
			continue
		}
		d := time.Since(start)
		t.Logf("%-16s seen by node B after %v", c.what, d.Round(time.Millisecond))
		if d > 2*time.Second {
			t.Errorf("%s: node B took %v, more than 2 s", c.what, d)
		}
	}
}
