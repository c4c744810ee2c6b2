package sqlstore

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// trafficStores opens a fresh store on every configured database.
func trafficStores(t *testing.T) map[string]*Store {
	out := map[string]*Store{}
	for name, open := range freshStores(t) {
		out[name] = open(t)
	}
	return out
}

func TestTrafficRepoKeepsLimitsMarksSettingsAndPeriodSpending(t *testing.T) {
	for name, s := range trafficStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			tr := s.Traffic()
			if err := tr.PutLimits(ctx, store.SubjectToken, "7", json.RawMessage(`{"rpm":5}`)); err != nil {
				t.Fatal(err)
			}
			if err := tr.PutLimits(ctx, store.SubjectToken, "7", json.RawMessage(`{"rpm":6}`)); err != nil {
				t.Fatal(err)
			}
			if err := tr.PutLimits(ctx, store.SubjectGroup, "vip", json.RawMessage(`{"tpm":9}`)); err != nil {
				t.Fatal(err)
			}
			if err := tr.PutLimits(ctx, store.SubjectGroup, "vip", nil); err != nil {
				t.Fatal(err)
			}
			rows, err := tr.Limits(ctx)
			if err != nil || len(rows) != 1 || string(rows[0].Spec) != `{"rpm":6}` {
				t.Fatalf("limits %v %v", rows, err)
			}
			for i, want := range []bool{true, false} {
				if ok, err := tr.ClaimNotice(ctx, "budget:t:7:day:0:50"); err != nil || ok != want {
					t.Fatalf("claim %d: %v %v", i, ok, err)
				}
			}
			if _, ok, err := tr.Setting(ctx, "notify"); err != nil || ok {
				t.Fatalf("unset setting: %v %v", ok, err)
			}
			for _, v := range []string{"a", "b"} {
				if err := tr.PutSetting(ctx, "notify", v); err != nil {
					t.Fatal(err)
				}
			}
			if v, ok, err := tr.Setting(ctx, "notify"); err != nil || !ok || v != "b" {
				t.Fatalf("setting %q %v %v", v, ok, err)
			}
			u := &store.User{Username: "u", PasswordHash: "x", Role: "user", Group: "default"}
			if err := s.Users().Create(ctx, u); err != nil {
				t.Fatal(err)
			}
			day := time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)
			logs := []store.UsageLog{
				{Type: store.LogConsume, UserID: u.ID, TokenID: 3, Quota: 100, CreatedAt: day.Add(-time.Minute)},
				{Type: store.LogConsume, UserID: u.ID, TokenID: 3, Quota: 40, CreatedAt: day.Add(time.Minute)},
				{Type: store.LogConsume, UserID: u.ID, TokenID: 4, Quota: 2, CreatedAt: day.Add(time.Hour)},
				{Type: store.LogError, UserID: u.ID, TokenID: 3, Quota: 0, CreatedAt: day.Add(time.Hour)},
			}
			if err := s.Logs().Insert(ctx, logs); err != nil {
				t.Fatal(err)
			}
			if n, err := tr.PeriodSpent(ctx, store.SubjectUser, u.ID, day); err != nil || n != 42 {
				t.Fatalf("user spent %d %v", n, err)
			}
			if n, err := tr.PeriodSpent(ctx, store.SubjectToken, 3, day); err != nil || n != 40 {
				t.Fatalf("token spent %d %v", n, err)
			}
			if err := s.Ledger().Apply(ctx, []store.LedgerEntry{
				{Key: "t1", Kind: store.LedgerTopUp, UserID: u.ID, Delta: 500, CreatedAt: day},
				{Key: "t2", Kind: store.LedgerTopUp, UserID: u.ID, Delta: 250, CreatedAt: day},
				{Key: "r1", Kind: store.LedgerReserve, UserID: u.ID, Delta: -30, CreatedAt: day},
			}); err != nil {
				t.Fatal(err)
			}
			if n, err := tr.Granted(ctx, u.ID); err != nil || n != 750 {
				t.Fatalf("granted %d %v", n, err)
			}
		})
	}
}
