package storetest

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// booksTests cover what the operator's books read: a channel's upstream
// cost, the ledger and the usage rows over a window.
var booksTests = []namedTest{
	{"the names of channels, users and keys are read for many ids at once", func(t *testing.T, s store.Store) {
		u := newUser(t, s, "frank", 0)
		k := newToken(t, s, u, "frank-key", 0)
		c := sampleChannel("named")
		must(t, s.Channels().Create(ctx(t), c), "create")
		for _, tc := range []struct {
			by   string
			id   int64
			want string
		}{{"user", u.ID, "frank"}, {"token", k.ID, "frank-key"}, {"channel", c.ID, "named"}} {
			names, err := s.Books().Names(ctx(t), tc.by, []int64{tc.id, 99999})
			must(t, err, "names")
			if len(names) != 1 || names[tc.id] != tc.want {
				t.Errorf("%s names = %v, want only %d: %q", tc.by, names, tc.id, tc.want)
			}
		}
	}},
	{"a channel's cost round-trips and can be removed", func(t *testing.T, s store.Store) {
		c := sampleChannel("costly")
		d := 0.8
		c.Cost = &store.ChannelCost{Discount: &d, Prices: map[string]store.CostPrice{
			"gpt-a": {InputPerMTok: 1.5, OutputPerMTok: 6, Tiers: []store.PriceTier{{AboveInputTokens: 1000, InputPerMTok: 3}}}}}
		must(t, s.Channels().Create(ctx(t), c), "create")
		got, err := s.Channels().Get(ctx(t), c.ID)
		must(t, err, "get")
		if !reflect.DeepEqual(got.Cost, c.Cost) {
			t.Fatalf("cost = %+v, want %+v", got.Cost, c.Cost)
		}
		got.Cost = nil
		must(t, s.Channels().Update(ctx(t), got), "update")
		all, err := s.Channels().All(ctx(t))
		must(t, err, "all")
		if len(all) != 1 || all[0].Cost != nil {
			t.Fatalf("cost after removal = %+v", all[0].Cost)
		}
	}},
	{"logs are read and summed over a half-open window", func(t *testing.T, s store.Store) {
		base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		logs := []store.UsageLog{
			{Type: store.LogConsume, UserID: 1, TokenID: 10, Model: "m", Quota: 5, CreatedAt: base.Add(-time.Second)},
			{Type: store.LogConsume, UserID: 1, TokenID: 10, Model: "m", Quota: 7, CreatedAt: base},
			{Type: store.LogConsume, UserID: 1, TokenID: 10, Model: "m", Quota: 11, CreatedAt: base.Add(time.Minute)},
			{Type: store.LogRefund, UserID: 1, TokenID: 10, Model: "m", Quota: 3, CreatedAt: base.Add(2 * time.Minute)},
			{Type: store.LogTopUp, UserID: 2, Quota: 100, CreatedAt: base.Add(3 * time.Minute)},
			{Type: store.LogError, UserID: 2, TokenID: 20, Model: "m", CreatedAt: base.Add(4 * time.Minute)},
			{Type: store.LogConsume, UserID: 2, TokenID: 20, Model: "m", Quota: 13, CreatedAt: base.Add(time.Hour)},
			{Type: store.LogConsume, UserID: 1, TokenID: 10, Model: "m", Quota: 2, CreatedAt: base.Add(5 * time.Minute),
				Other: []byte(`{"surface":"task","stream":false,"task_id":"task_1"}`)},
			{Type: store.LogConsume, UserID: 1, TokenID: 10, Model: "m", Quota: 1, CreatedAt: base.Add(6 * time.Minute),
				Other: []byte(`{"surface":"openai","stream":false,"note":"\"surface\":\"task\""}`)},
		}
		must(t, s.Logs().Insert(ctx(t), logs), "insert logs")
		w := store.Window{Since: base, Until: base.Add(time.Hour)}
		var quotas []int64
		must(t, s.Books().EachLog(ctx(t), w, []string{store.LogConsume, store.LogRefund}, func(l store.UsageLog) error {
			quotas = append(quotas, l.Quota)
			return nil
		}), "each log")
		if !slices.Equal(quotas, []int64{7, 11, 3, 2, 1}) {
			t.Fatalf("rows read = %v, want [7 11 3 2 1] (the window's consume and refund rows, oldest first)", quotas)
		}
		stop := errors.New("stop")
		if err := s.Books().EachLog(ctx(t), w, nil, func(store.UsageLog) error { return stop }); !errors.Is(err, stop) {
			t.Fatalf("fn's error = %v, want it returned", err)
		}
		totals, err := s.Books().LogTotals(ctx(t), w)
		must(t, err, "totals")
		got := map[store.LogTotal]bool{}
		for _, tt := range totals {
			got[tt] = true
		}
		want := []store.LogTotal{{UserID: 1, TokenID: 10, Type: store.LogConsume, Rows: 3, Quota: 19},
			{UserID: 1, TokenID: 10, Type: store.LogConsume, Task: true, Rows: 1, Quota: 2},
			{UserID: 1, TokenID: 10, Type: store.LogRefund, Rows: 1, Quota: 3},
			{UserID: 2, Type: store.LogTopUp, Rows: 1, Quota: 100},
			{UserID: 2, TokenID: 20, Type: store.LogError, Rows: 1}}
		if len(totals) != len(want) {
			t.Fatalf("totals = %+v, want %+v", totals, want)
		}
		for _, w := range want {
			if !got[w] {
				t.Fatalf("totals = %+v, missing %+v", totals, w)
			}
		}
	}},
	{"ledger entries are read in time order from a moment on, and summed before one", func(t *testing.T, s store.Store) {
		u := newUser(t, s, "carol", 0)
		tok := newToken(t, s, u, "k", 0)
		base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		entries := []store.LedgerEntry{
			{Key: "late:settle", Kind: store.LedgerSettle, UserID: u.ID, TokenID: tok.ID, Delta: 4, TokenDelta: 4, Used: 6, CreatedAt: base.Add(2 * time.Minute)},
			{Key: "top", Kind: store.LedgerTopUp, UserID: u.ID, Delta: 1000, CreatedAt: base.Add(-time.Hour)},
			{Key: "late:reserve", Kind: store.LedgerReserve, UserID: u.ID, TokenID: tok.ID, Delta: -10, TokenDelta: -10, CreatedAt: base.Add(time.Minute)},
			{Key: "early:reserve", Kind: store.LedgerReserve, UserID: u.ID, TokenID: tok.ID, Delta: -20, TokenDelta: -20, CreatedAt: base.Add(-time.Minute)},
			{Key: "same:reserve", Kind: store.LedgerReserve, UserID: u.ID, TokenID: tok.ID, Delta: -1, TokenDelta: -1, CreatedAt: base},
		}
		must(t, s.Ledger().Apply(ctx(t), entries), "apply")
		var keys []string
		must(t, s.Books().EachEntry(ctx(t), base, func(e store.LedgerEntry) error {
			keys = append(keys, e.Key)
			return nil
		}), "each entry")
		if !slices.Equal(keys, []string{"same:reserve", "late:reserve", "late:settle"}) {
			t.Fatalf("entries = %v, want those at or after the moment, oldest first", keys)
		}
		users, tokens, err := s.Books().BalancesBefore(ctx(t), base)
		must(t, err, "balances before")
		if users[u.ID] != 980 || tokens[tok.ID] != -20 {
			t.Fatalf("balances before = user %d key %d, want 980 and -20", users[u.ID], tokens[tok.ID])
		}
	}},
	{"a user's and a key's drift from their ledger, and a key's balance at a moment", func(t *testing.T, s store.Store) {
		u := newUser(t, s, "dave", 0)
		limited := newToken(t, s, u, "limited", 500)
		unlimited := newToken(t, s, u, "unlimited", -1)
		base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		must(t, s.Ledger().Apply(ctx(t), []store.LedgerEntry{
			{Key: "top", Kind: store.LedgerTopUp, UserID: u.ID, Delta: 1000, CreatedAt: base.Add(-time.Hour)},
			{Key: "a:reserve", Kind: store.LedgerSettle, UserID: u.ID, TokenID: limited.ID, Delta: -30, TokenDelta: -30, Used: 30, CreatedAt: base.Add(-time.Minute)},
			{Key: "b:reserve", Kind: store.LedgerSettle, UserID: u.ID, TokenID: limited.ID, Delta: -70, TokenDelta: -70, Used: 70, CreatedAt: base.Add(time.Minute)},
			{Key: "c:reserve", Kind: store.LedgerSettle, UserID: u.ID, TokenID: unlimited.ID, Delta: -5, TokenDelta: -5, Used: 5, CreatedAt: base.Add(time.Minute)},
		}), "apply")
		other := newUser(t, s, "erin", 42)
		drifts, err := s.Books().Drifts(ctx(t))
		must(t, err, "drifts")
		if d, ok := drifts.Users[u.ID]; !ok || d != 0 {
			t.Fatalf("drift of a user moved only by its ledger = %d (listed %v); want 0", d, ok)
		}
		if d := drifts.Users[other.ID]; d != 42 {
			t.Fatalf("drift of a user created with 42 outside the ledger = %d; want 42", d)
		}
		if d := drifts.Tokens[limited.ID]; !drifts.Limited[limited.ID] || d != 500 {
			t.Fatalf("limited key's drift = %d (limited %v); want 500 (400 now, 100 spent: the balance it was made with)", d, drifts.Limited[limited.ID])
		}
		_, tokens, err := s.Books().BalancesBefore(ctx(t), base)
		if must(t, err, "before"); drifts.Tokens[limited.ID]+tokens[limited.ID] != 470 {
			t.Fatalf("limited key at the moment = %d, want 470 (its drift and its movements before)", drifts.Tokens[limited.ID]+tokens[limited.ID])
		}
		if _, listed := drifts.Tokens[unlimited.ID]; !listed || drifts.Limited[unlimited.ID] {
			t.Fatalf("unlimited key: listed %v limited %v; want listed, not limited", listed, drifts.Limited[unlimited.ID])
		}
	}},
}
