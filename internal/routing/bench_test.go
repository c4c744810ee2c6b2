package routing

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// benchRouter is the benchmark's setup: two channels of three keys each,
// as docs/PERFORMANCE.md's affinity run.
func benchRouter() *Router {
	r := NewRouter(NewHealth(nil, nil))
	a, b := ch(1, 0, 1, "enabled"), ch(2, 0, 1, "enabled")
	a.Key, b.Key = "a0\na1\na2", "b0\nb1\nb2"
	r.Swap(NewTable([]store.Channel{a, b}))
	return r
}

// BenchmarkRoute is the routing work of one call: the plan alone, and with
// cache affinity the session key, the pin lookup (a hit, renewed), the
// pinned key's check and the plan behind it.
func BenchmarkRoute(b *testing.B) {
	req := conversation("You are a helpful assistant. Answer briefly and cite sources.", "What is the capital of France?", "And of Spain?", "And Italy?")
	cost := func(c *Channel) float64 { return float64(c.ID) }
	for _, strategy := range Strategies {
		for _, affinity := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/affinity=%v", strategy, affinity), func(b *testing.B) {
				r := benchRouter()
				o := PlanOptions{Group: "default", Model: "m", Max: 3, Strategy: strategy, Cost: cost}
				ctx := context.Background()
				ttl := 300 * time.Second
				if affinity {
					key := SessionKey(1, "default", "m", SessionSources{}, req)
					_ = r.Pins.Set(ctx, key, Pin{ChannelID: 2, KeyIndex: 1}, ttl)
				}
				b.ReportAllocs()
				for b.Loop() {
					if affinity {
						key := SessionKey(1, "default", "m", SessionSources{}, req)
						if pin, ok, _ := r.Pins.Get(ctx, key, ttl); ok {
							if _, ok := r.Table().Pinned(r.Health, o, pin); !ok {
								b.Fatal("pin not usable")
							}
						}
					}
					if len(r.Table().PlanWith(r.Health, o)) != 2 {
						b.Fatal("short plan")
					}
				}
			})
		}
	}
}

// BenchmarkSessionKeyPrefix hashes a conversation without an explicit id.
func BenchmarkSessionKeyPrefix(b *testing.B) {
	req := conversation("You are a helpful assistant. Answer briefly and cite sources.", "What is the capital of France?", "And of Spain?")
	req.Tools = append(req.Tools, ir.Tool{Name: "search", Description: "web search", Parameters: []byte(`{"type":"object","properties":{"q":{"type":"string"}}}`)})
	b.ReportAllocs()
	for b.Loop() {
		SessionKey(1, "default", "m", SessionSources{}, req)
	}
}
