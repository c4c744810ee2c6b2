package billing

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// TestEveryCreditIsABalanceMoveAndARecordedRow drives each kind of money
// that comes in from outside the calls through the one entry point and
// checks the live and stored balances and the row each leaves.
func TestEveryCreditIsABalanceMoveAndARecordedRow(t *testing.T) {
	detail := json.RawMessage(`{"note":"card top-up, order o1"}`)
	cases := []struct {
		name             string
		credit           func(e *holdEnv) Credit
		user, token      int64 // balances after
		logType, logNote string
		logToken         bool
	}{
		{"a starting balance", func(e *holdEnv) Credit { return Credit{UserID: e.userID, Delta: 250, Note: "initial quota"} },
			1250, 500, store.LogTopUp, `{"note":"initial quota"}`, false},
		{"an administrator's deduction is an adjust row", func(e *holdEnv) Credit {
			return Credit{UserID: e.userID, Delta: -300, Note: "correction"}
		}, 700, 500, store.LogAdjust, `{"note":"correction"}`, false},
		{"a limited key's own quota", func(e *holdEnv) Credit {
			return Credit{UserID: e.userID, TokenID: e.tokenID, Delta: 40, Note: "key quota"}
		}, 1000, 540, store.LogTopUp, `{"note":"key quota"}`, true},
		{"a payment under its key", func(e *holdEnv) Credit {
			return Credit{UserID: e.userID, Delta: 900, Key: "topup:stripe:o1", Detail: detail}
		}, 1900, 500, store.LogTopUp, string(detail), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newHoldEnv(t, func(st store.Store) Balances { return NewMemoryBalances(st) })
			ctx := context.Background()
			got, err := e.svc.Credit(ctx, tc.credit(e))
			if err != nil || !got.Applied {
				t.Fatalf("credit: %+v %v", got, err)
			}
			e.check(t, e.svc, tc.user, tc.token)
			logs, _, err := e.st.Logs().List(ctx, store.LogFilter{UserID: e.userID}, store.Page{Page: 1, PageSize: 10})
			if err != nil || len(logs) != 1 {
				t.Fatalf("rows %+v %v, want one", logs, err)
			}
			l := logs[0]
			if l.Type != tc.logType || string(l.Other) != tc.logNote || (l.TokenID != 0) != tc.logToken {
				t.Fatalf("row type %q other %s token %d, want %q %s", l.Type, l.Other, l.TokenID, tc.logType, tc.logNote)
			}
		})
	}
}

// TestAKeyedCreditIsGivenOnce is a payment delivered twice: the second
// delivery finds the key recorded and moves nothing.
func TestAKeyedCreditIsGivenOnce(t *testing.T) {
	e := newHoldEnv(t, func(st store.Store) Balances { return NewMemoryBalances(st) })
	ctx := context.Background()
	c := Credit{UserID: e.userID, Delta: 100, Key: "topup:stripe:o2", Note: "card"}
	for i, want := range []bool{true, false} {
		got, err := e.svc.Credit(ctx, c)
		if err != nil || got.Applied != want {
			t.Fatalf("delivery %d: %+v %v, want applied %v", i+1, got, err, want)
		}
	}
	e.check(t, e.svc, 1100, 500)
	for _, bad := range []Credit{
		{UserID: e.userID, Delta: -5, Key: "k-negative"},
		{UserID: e.userID, TokenID: e.tokenID, Delta: 5, Key: "k-token"},
	} {
		if _, err := e.svc.Credit(ctx, bad); err == nil {
			t.Fatalf("keyed credit %+v accepted", bad)
		}
	}
	e.check(t, e.svc, 1100, 500)
}
