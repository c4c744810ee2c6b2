package app

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

func TestRetentionPrunesOnlyUsageRowsOlderThanItsDays(t *testing.T) {
	ctx := context.Background()
	st, err := sqlstore.OpenStore(ctx, "sqlite:"+filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	var rows []store.UsageLog
	// 2,500 rows 31 days old (three batches), 10 just inside 30 days.
	for i := range 2510 {
		age := 31 * 24 * time.Hour
		if i >= 2500 {
			age = 30*24*time.Hour - time.Minute
		}
		rows = append(rows, store.UsageLog{Type: store.LogConsume, UserID: 1, Model: "m", Quota: 1, CreatedAt: now.Add(-age)})
	}
	if err := st.Logs().Insert(ctx, rows); err != nil {
		t.Fatal(err)
	}
	u := &store.User{Username: "u", Role: store.RoleUser, Group: "default", Status: store.StatusEnabled}
	if err := st.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	entry := store.LedgerEntry{Key: "old:topup", Kind: store.LedgerTopUp, UserID: u.ID, Delta: 7, CreatedAt: now.Add(-400 * 24 * time.Hour)}
	if err := st.Ledger().Apply(ctx, []store.LedgerEntry{entry}); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name    string
		at      time.Time
		deleted int64
		left    int
	}{
		{"rows past the retention go, in batches", now, 2500, 10},
		{"a second pass at the same time finds nothing", now, 0, 10},
		{"a day later the rest are past it too", now.Add(24 * time.Hour), 10, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &retention{logs: st.Logs(), days: 30, now: func() time.Time { return tc.at },
				log: slog.New(slog.NewTextHandler(io.Discard, nil)), batch: 1000}
			n, err := r.pruneOnce(ctx)
			if err != nil || n != tc.deleted {
				t.Fatalf("deleted %d (%v), want %d", n, err, tc.deleted)
			}
			if _, total, _ := st.Logs().List(ctx, store.LogFilter{}, store.Page{}); total != tc.left {
				t.Fatalf("%d rows left, want %d", total, tc.left)
			}
			if delta, _, err := st.Ledger().Sum(ctx, u.ID); err != nil || delta != 7 {
				t.Fatalf("ledger sum %d (%v): the ledger must never be pruned", delta, err)
			}
		})
	}
}
