package app_test

import (
	"fmt"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
)

// sessionRun is what one run of multi-turn sessions showed.
type sessionRun struct {
	calls          int
	prompt, cached int64
	quota          int64
}

// runSessions sends sessions conversations of turns turns each through a
// gateway over two channels of three keys on the caching provider, the
// sessions' turns interleaved as concurrent users' would be, and sums what
// the provider cached and what the calls were charged.
func runSessions(t *testing.T, price config.SeedPrice, sessions, turns int) sessionRun {
	g, p := affinityGateway(t, price)
	var run sessionRun
	for i := range turns {
		for s := range sessions {
			tr := turn{path: "/v1/chat/completions", body: map[string]any{"model": "m", "max_tokens": 10,
				"messages": messages(fmt.Sprintf("session %d: summarise the attached report", s), i+1)}}
			if code, body := tr.send(t, g, fmt.Sprintf("s%d-t%d", s, i)); code != 200 {
				t.Fatalf("%d %s", code, body)
			}
		}
	}
	for _, c := range p.take() {
		run.calls++
		run.prompt += int64(c.prompt)
		run.cached += int64(c.cached)
	}
	rowOther(t, g, fmt.Sprintf("s%d-t%d", sessions-1, turns-1))
	_, body := g.Do(t, "GET", "/api/logs?type=consume&page_size=1000", affinityRoot, nil)
	items, _ := body["items"].([]any)
	for _, it := range items {
		run.quota += int64(it.(map[string]any)["quota"].(float64))
	}
	if len(items) != run.calls {
		t.Fatalf("%d consume rows for %d calls", len(items), run.calls)
	}
	return run
}

// TestAffinityKeepsMultiTurnSessionsInTheProvidersCache is the affinity
// benchmark of docs/PERFORMANCE.md: 20 sessions of 8 turns over 2 × 3
// keys, with affinity on and off, at a price whose cache reads cost a
// tenth of fresh input. Run with -v to see the table.
func TestAffinityKeepsMultiTurnSessionsInTheProvidersCache(t *testing.T) {
	const sessions, turns, quotaPerUSD = 20, 8, 500_000.0
	price := config.SeedPrice{InputPerMTok: 3, CacheReadPerMTok: 0.3, OutputPerMTok: 15}
	off := price
	off.Affinity = affinityOff
	on := runSessions(t, price, sessions, turns)
	without := runSessions(t, off, sessions, turns)
	t.Logf("| affinity | calls | prompt tokens | cache-read tokens | cache-read share | sessions' cost (USD) |")
	t.Logf("|---|---:|---:|---:|---:|---:|")
	for _, r := range []struct {
		name string
		run  sessionRun
	}{{"on", on}, {"off", without}} {
		t.Logf("| %s | %d | %d | %d | %.1f %% | %.4f |", r.name, r.run.calls, r.run.prompt, r.run.cached,
			100*float64(r.run.cached)/float64(r.run.prompt), float64(r.run.quota)/quotaPerUSD)
	}
	// With affinity every turn after the first reads all but its newest
	// message from the cache: (n−1)/n of each prompt from turn 2 on.
	onShare, offShare := float64(on.cached)/float64(on.prompt), float64(without.cached)/float64(without.prompt)
	if onShare < 0.7 || offShare > onShare/1.5 || on.quota >= without.quota {
		t.Fatalf("cache-read share %.2f with affinity and %.2f without; quota %d and %d", onShare, offShare, on.quota, without.quota)
	}
}
