package app_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit/redisproc"
)

// While Redis is down every dialect answers 503 with its own error shape
// (never a 500 internal_error), and within about a second of Redis coming
// back (empty) calls are served again, charged against balances rebuilt
// from the ledger.
func TestRedisOutageAnswers503InEveryDialectAndRecovers(t *testing.T) {
	rs := redisproc.Start(t)
	var calls atomic.Int64
	up := usageUpstream(t, &calls, 0)
	ds := dialects(t)
	var tokens []config.SeedToken
	for _, d := range ds {
		tokens = append(tokens, config.SeedToken{Name: d.name, User: "alice", Key: "sk-rf-" + d.name})
	}
	g := trafficGateway(t, up.URL, 10_000_000, tokens, func(c *config.Config) { c.Redis = rs.URL() })
	for _, d := range ds {
		if resp := d.send(g, "sk-rf-"+d.name, "hi"); resp.StatusCode != 200 {
			t.Fatalf("%s before the outage: %d %v", d.name, resp.StatusCode, readJSON(t, resp))
		}
	}
	rs.Kill()
	for _, d := range ds {
		resp := d.send(g, "sk-rf-"+d.name, "hi")
		body := readJSON(t, resp)
		e, _ := body["error"].(map[string]any)
		if resp.StatusCode != 503 {
			t.Fatalf("%s during the outage: %d %v, want 503", d.name, resp.StatusCode, body)
		}
		switch d.name {
		case "openai":
			if e["code"] != "redis_unavailable" {
				t.Fatalf("openai error %v", body)
			}
		case "messages":
			if body["type"] != "error" || e["type"] != "overloaded_error" {
				t.Fatalf("messages error %v", body)
			}
		default:
			if e["code"] != float64(503) || e["status"] == "" || e["status"] == nil {
				t.Fatalf("alternate-native error %v", body)
			}
		}
	}
	rs.Restart()
	back := time.Now()
	for _, d := range ds {
		for {
			resp := d.send(g, "sk-rf-"+d.name, "hi")
			code := resp.StatusCode
			body := readJSON(t, resp)
			if code == 200 {
				break
			}
			if code != 503 {
				t.Fatalf("%s after the outage: %d %v", d.name, code, body)
			}
			if time.Since(back) > 1500*time.Millisecond {
				t.Fatalf("%s still refused %v after Redis came back: %v", d.name, time.Since(back), body)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Logf("serving every dialect again %v after Redis came back", time.Since(back))
	ctx := context.Background()
	if err := g.App.Writer.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	alice, err := g.App.Store.Users().GetByUsername(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	live, err := g.App.Billing.Balances().User(ctx, alice.ID)
	if err != nil || live != alice.Quota {
		t.Fatalf("live balance %d (%v), ledger %d", live, err, alice.Quota)
	}
}
