package storetest

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

var priceTests = []namedTest{
	{"upsert stores every field and overwrites on the same name", func(t *testing.T, s store.Store) {
		p := store.ModelPrice{Name: "gpt-x", InputPerMTok: 2.5, OutputPerMTok: 10, CacheReadPerMTok: 1.25, CacheWritePerMTok: 3.75,
			PerCall: 0.01, Free: true, Extra: json.RawMessage(`{"image":{"hd":2}}`)}
		must(t, s.Prices().Upsert(ctx(t), p), "insert")
		got, err := s.Prices().Get(ctx(t), "gpt-x")
		must(t, err, "get")
		checkUTC(t, "UpdatedAt", got.UpdatedAt)
		if got.InputPerMTok != 2.5 || got.OutputPerMTok != 10 || got.CacheReadPerMTok != 1.25 || got.CacheWritePerMTok != 3.75 ||
			got.PerCall != 0.01 || !got.Free || !jsonEqual(got.Extra, p.Extra) {
			t.Errorf("got %+v", *got)
		}
		when := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		must(t, s.Prices().Upsert(ctx(t), store.ModelPrice{Name: "gpt-x", InputPerMTok: 1, UpdatedAt: when}), "overwrite")
		got, err = s.Prices().Get(ctx(t), "gpt-x")
		must(t, err, "get")
		if got.InputPerMTok != 1 || got.OutputPerMTok != 0 || got.Free || got.Extra != nil || !got.UpdatedAt.Equal(when) {
			t.Errorf("after overwrite: %+v", *got)
		}
	}},
	{"reasoning price and tiers round-trip and clear on overwrite", func(t *testing.T, s store.Store) {
		p := store.ModelPrice{Name: "gemini-x", InputPerMTok: 1.25, OutputPerMTok: 10, ReasoningPerMTok: 12.5,
			Tiers: []store.PriceTier{
				{AboveInputTokens: 200_000, InputPerMTok: 2.5, OutputPerMTok: 15},
				{AboveInputTokens: 1_000_000, InputPerMTok: 5, CacheReadPerMTok: 0.625, CacheWritePerMTok: 6.25, ReasoningPerMTok: 20},
			}}
		must(t, s.Prices().Upsert(ctx(t), p), "insert")
		got, err := s.Prices().Get(ctx(t), "gemini-x")
		must(t, err, "get")
		if got.ReasoningPerMTok != 12.5 || !reflect.DeepEqual(got.Tiers, p.Tiers) {
			t.Errorf("got reasoning %v tiers %+v", got.ReasoningPerMTok, got.Tiers)
		}
		list, err := s.Prices().List(ctx(t))
		must(t, err, "list")
		if len(list) != 1 || !reflect.DeepEqual(list[0].Tiers, p.Tiers) {
			t.Errorf("List = %+v", list)
		}
		must(t, s.Prices().Upsert(ctx(t), store.ModelPrice{Name: "gemini-x", InputPerMTok: 1}), "overwrite")
		got, err = s.Prices().Get(ctx(t), "gemini-x")
		must(t, err, "get")
		if got.ReasoningPerMTok != 0 || got.Tiers != nil {
			t.Errorf("after overwrite: reasoning %v tiers %#v", got.ReasoningPerMTok, got.Tiers)
		}
	}},
	{"affinity and strategy round-trip and clear on overwrite", func(t *testing.T, s store.Store) {
		p := store.ModelPrice{Name: "claude-x", InputPerMTok: 3, Affinity: &store.Affinity{Enabled: false, TTLSeconds: 3600},
			Routing: &store.RoutingChoice{Strategy: "latency"}}
		must(t, s.Prices().Upsert(ctx(t), p), "insert")
		got, err := s.Prices().Get(ctx(t), "claude-x")
		must(t, err, "get")
		if !reflect.DeepEqual(got.Affinity, p.Affinity) || !reflect.DeepEqual(got.Routing, p.Routing) {
			t.Errorf("got affinity %+v routing %+v", got.Affinity, got.Routing)
		}
		must(t, s.Prices().Upsert(ctx(t), store.ModelPrice{Name: "claude-x", InputPerMTok: 3}), "overwrite")
		got, err = s.Prices().Get(ctx(t), "claude-x")
		must(t, err, "get")
		if got.Affinity != nil || got.Routing != nil {
			t.Errorf("after overwrite: affinity %+v routing %+v", got.Affinity, got.Routing)
		}
	}},
	{"list is ordered by name and delete removes", func(t *testing.T, s store.Store) {
		for _, n := range []string{"b", "c", "a"} {
			must(t, s.Prices().Upsert(ctx(t), store.ModelPrice{Name: n, InputPerMTok: 1}), "upsert "+n)
		}
		must(t, s.Prices().Delete(ctx(t), "c"), "delete")
		got, err := s.Prices().List(ctx(t))
		must(t, err, "list")
		if len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" {
			t.Errorf("List = %+v", got)
		}
	}},
	{"names differing only in case are distinct", func(t *testing.T, s store.Store) {
		must(t, s.Prices().Upsert(ctx(t), store.ModelPrice{Name: "Model-A", InputPerMTok: 1}), "upsert Model-A")
		must(t, s.Prices().Upsert(ctx(t), store.ModelPrice{Name: "model-a", InputPerMTok: 2}), "upsert model-a")
		got, err := s.Prices().Get(ctx(t), "Model-A")
		must(t, err, "get")
		if got.InputPerMTok != 1 {
			t.Errorf("Model-A input = %v, want 1: lower-case upsert overwrote it", got.InputPerMTok)
		}
		u := newUser(t, s, "Zed", 0)
		v := newUser(t, s, "zed", 0)
		if u.ID == v.ID {
			t.Error("Zed and zed are one user")
		}
	}},
	{"missing price is not found", func(t *testing.T, s store.Store) {
		_, err := s.Prices().Get(ctx(t), "none")
		wantErr(t, err, store.ErrNotFound, "Get")
		wantErr(t, s.Prices().Delete(ctx(t), "none"), store.ErrNotFound, "Delete")
	}},
}

// jsonEqual compares JSON documents by value, since some databases
// normalise whitespace.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}
