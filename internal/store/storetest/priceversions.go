package storetest

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

var priceVersionTests = []namedTest{
	{"every change adds a version and history lists them newest first", func(t *testing.T, s store.Store) {
		first := store.ModelPrice{Name: "gpt-v", InputPerMTok: 1, OutputPerMTok: 2, CacheReadPerMTok: 0.5, CacheWritePerMTok: 1.5,
			ReasoningPerMTok: 3, BatchInputPerMTok: 0.5, BatchOutputPerMTok: 1, PerCall: 0.01,
			Tiers:  []store.PriceTier{{AboveInputTokens: 1000, InputPerMTok: 2}},
			Source: store.PriceSourceSeed, Actor: "seed"}
		must(t, s.Prices().Upsert(ctx(t), first), "first")
		must(t, s.Prices().Upsert(ctx(t), store.ModelPrice{Name: "gpt-v", InputPerMTok: 4, Source: store.PriceSourceAPI, Actor: "root"}), "second")
		h, err := s.Prices().History(ctx(t), "gpt-v")
		must(t, err, "history")
		if len(h) != 2 || h[0].Version != 2 || h[1].Version != 1 {
			t.Fatalf("history = %+v, want versions 2 then 1", h)
		}
		old := h[1]
		checkUTC(t, "EffectiveFrom", old.EffectiveFrom)
		checkUTC(t, "CreatedAt", old.CreatedAt)
		if old.InputPerMTok != 1 || old.OutputPerMTok != 2 || old.CacheReadPerMTok != 0.5 || old.CacheWritePerMTok != 1.5 ||
			old.ReasoningPerMTok != 3 || old.BatchInputPerMTok != 0.5 || old.BatchOutputPerMTok != 1 || old.PerCall != 0.01 ||
			!reflect.DeepEqual(old.Tiers, first.Tiers) || old.Source != "seed" || old.Actor != "seed" || old.Model != "gpt-v" {
			t.Errorf("version 1 = %+v, want the first price unchanged", old)
		}
		if h[0].InputPerMTok != 4 || h[0].Tiers != nil || h[0].Source != "api" || h[0].Actor != "root" {
			t.Errorf("version 2 = %+v", h[0])
		}
		if h[0].EffectiveFrom.Before(old.EffectiveFrom) {
			t.Errorf("version 2 effective %v before version 1 %v", h[0].EffectiveFrom, old.EffectiveFrom)
		}
		got, err := s.Prices().Get(ctx(t), "gpt-v")
		must(t, err, "get")
		if got.Version != 2 || got.InputPerMTok != 4 || got.BatchInputPerMTok != 0 {
			t.Errorf("Get = %+v, want version 2", *got)
		}
	}},
	{"a version effective later leaves the current one in effect until then", func(t *testing.T, s store.Store) {
		must(t, s.Prices().Upsert(ctx(t), store.ModelPrice{Name: "m", InputPerMTok: 1}), "now")
		later := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		must(t, s.Prices().Upsert(ctx(t), store.ModelPrice{Name: "m", InputPerMTok: 9, EffectiveFrom: later}), "later")
		got, err := s.Prices().Get(ctx(t), "m")
		must(t, err, "get")
		if got.Version != 1 || got.InputPerMTok != 1 {
			t.Errorf("Get = version %d input %v, want version 1 at 1 until %v", got.Version, got.InputPerMTok, later)
		}
		list, err := s.Prices().List(ctx(t))
		must(t, err, "list")
		if len(list) != 1 || list[0].Version != 1 {
			t.Errorf("List = %+v, want version 1", list)
		}
		vs, err := s.Prices().Versions(ctx(t))
		must(t, err, "versions")
		if len(vs) != 2 || !vs[1].EffectiveFrom.Equal(later) {
			t.Fatalf("Versions = %+v, want both, the second from %v", vs, later)
		}
		if v, _ := store.InEffect(vs, later.Add(-time.Microsecond)); v.Version != 1 {
			t.Errorf("just before the switch: version %d, want 1", v.Version)
		}
		if v, _ := store.InEffect(vs, later); v.Version != 2 {
			t.Errorf("at the switch: version %d, want 2", v.Version)
		}
	}},
	{"a model priced only from later shows that price and is in effect nowhere before", func(t *testing.T, s store.Store) {
		later := time.Now().Add(time.Hour).UTC()
		must(t, s.Prices().Upsert(ctx(t), store.ModelPrice{Name: "new", OutputPerMTok: 3, EffectiveFrom: later}), "later")
		got, err := s.Prices().Get(ctx(t), "new")
		must(t, err, "get")
		if got.Version != 1 || got.OutputPerMTok != 3 {
			t.Errorf("Get = %+v", *got)
		}
		vs, err := s.Prices().Versions(ctx(t))
		must(t, err, "versions")
		if _, ok := store.InEffect(vs, time.Now()); ok {
			t.Error("a version is in effect before its time")
		}
	}},
	{"delete keeps the history and a new price continues its numbering", func(t *testing.T, s store.Store) {
		must(t, s.Prices().Upsert(ctx(t), store.ModelPrice{Name: "gone", InputPerMTok: 1}), "first")
		must(t, s.Prices().Upsert(ctx(t), store.ModelPrice{Name: "kept", InputPerMTok: 1}), "other")
		must(t, s.Prices().Delete(ctx(t), "gone"), "delete")
		vs, err := s.Prices().Versions(ctx(t))
		must(t, err, "versions")
		if len(vs) != 1 || vs[0].Model != "kept" {
			t.Errorf("Versions = %+v, want only the priced model's", vs)
		}
		h, err := s.Prices().History(ctx(t), "gone")
		must(t, err, "history")
		if len(h) != 1 {
			t.Errorf("history after delete = %+v, want the one version", h)
		}
		must(t, s.Prices().Upsert(ctx(t), store.ModelPrice{Name: "gone", InputPerMTok: 2}), "again")
		got, err := s.Prices().Get(ctx(t), "gone")
		must(t, err, "get")
		if got.Version != 2 || got.InputPerMTok != 2 {
			t.Errorf("Get = version %d input %v, want version 2 at 2", got.Version, got.InputPerMTok)
		}
		none, err := s.Prices().History(ctx(t), "never")
		must(t, err, "history of an unknown model")
		if len(none) != 0 {
			t.Errorf("history of an unknown model = %+v", none)
		}
	}},
	{"concurrent changes each get their own number", func(t *testing.T, s store.Store) {
		const n = 6
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- s.Prices().Upsert(ctx(t), store.ModelPrice{Name: "busy", InputPerMTok: float64(i + 1)})
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			must(t, err, "concurrent upsert")
		}
		h, err := s.Prices().History(ctx(t), "busy")
		must(t, err, "history")
		seen := map[float64]bool{}
		for i, v := range h {
			if v.Version != int64(n-i) {
				t.Fatalf("versions %s, want %d down to 1", versionList(h), n)
			}
			seen[v.InputPerMTok] = true
		}
		if len(h) != n || len(seen) != n {
			t.Fatalf("versions %s: want every change kept once", versionList(h))
		}
	}},
	{"the revision moves with every change and delete, and only then", func(t *testing.T, s store.Store) {
		rev := func() store.PriceRevision {
			r, err := s.Prices().Revision(ctx(t))
			must(t, err, "revision")
			return r
		}
		steps := []struct {
			name   string
			change func() error
		}{
			{"a first price", func() error { return s.Prices().Upsert(ctx(t), store.ModelPrice{Name: "r", InputPerMTok: 1}) }},
			{"a price from later", func() error {
				return s.Prices().Upsert(ctx(t), store.ModelPrice{Name: "r", InputPerMTok: 2, EffectiveFrom: time.Now().Add(time.Hour)})
			}},
			{"a delete", func() error { return s.Prices().Delete(ctx(t), "r") }},
		}
		before := rev()
		for _, st := range steps {
			must(t, st.change(), st.name)
			after := rev()
			if after == before {
				t.Errorf("%s left the revision at %+v", st.name, after)
			}
			if again := rev(); again != after {
				t.Errorf("after %s the revision moved with no change: %+v then %+v", st.name, after, again)
			}
			before = after
		}
	}},
}

func versionList(h []store.PriceVersion) string {
	out := ""
	for _, v := range h {
		out += fmt.Sprintf("v%d=%v ", v.Version, v.InputPerMTok)
	}
	return out
}
