package books

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/admission"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

// ledgerEnv is a real billing service on a real SQLite store: the books
// are read from what billing itself wrote.
type ledgerEnv struct {
	t     *testing.T
	st    *sqlstore.Store
	bill  *billing.Service
	w     *billing.Writer
	user  *store.User
	key   *store.Token // limited
	unlim *store.Token
}

func newLedgerEnv(t *testing.T) *ledgerEnv {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenStore(ctx, "sqlite:"+filepath.Join(t.TempDir(), "books.db"))
	if err != nil {
		t.Fatal(err)
	}
	w := billing.NewWriter(st, slog.New(slog.DiscardHandler), 5*time.Millisecond, 256)
	t.Cleanup(func() { _ = w.Close(context.Background()); st.Close() })
	e := &ledgerEnv{t: t, st: st, w: w, bill: billing.NewService(billing.NewMemoryBalances(st), w, 500000)}
	e.user = &store.User{Username: "alice", PasswordHash: "x", Role: store.RoleUser, Group: "default", Status: store.StatusEnabled}
	must(t, st.Users().Create(ctx, e.user))
	e.key = &store.Token{UserID: e.user.ID, Name: "limited", KeyHash: "h1", Quota: 50_000, Models: []string{}, Status: store.StatusEnabled}
	must(t, st.Tokens().Create(ctx, e.key))
	e.unlim = &store.Token{UserID: e.user.ID, Name: "unlimited", KeyHash: "h2", Quota: -1, Models: []string{}, Status: store.StatusEnabled}
	must(t, st.Tokens().Create(ctx, e.unlim))
	_, err = e.bill.Credit(ctx, billing.Credit{UserID: e.user.ID, Delta: 100_000, Note: "initial quota"})
	must(t, err)
	return e
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (e *ledgerEnv) acct(tok *store.Token) billing.Account {
	return billing.Account{UserID: e.user.ID, TokenID: tok.ID, Group: "default"}
}

func (e *ledgerEnv) reserve(tok *store.Token, key string, amount int64) *billing.Hold {
	e.t.Helper()
	h, err := e.bill.Reserve(context.Background(), e.acct(tok), key, amount)
	must(e.t, err)
	return h
}

func (e *ledgerEnv) row(tok *store.Token, typ string, quota int64) store.UsageLog {
	return store.UsageLog{Type: typ, UserID: e.user.ID, TokenID: tok.ID, Model: "m", Quota: quota,
		Other: admission.MarshalOther(&admission.Other{Surface: "openai"}, nil)}
}

// taskRow is a task's row, as the task service writes it.
func (e *ledgerEnv) taskRow(tok *store.Token, typ string, quota int64) store.UsageLog {
	r := e.row(tok, typ, quota)
	r.Other = admission.MarshalOther(&admission.Other{Surface: "task"}, map[string]any{"task_id": "task_x"})
	return r
}

// mixedRun is every way quota moves: answered calls, a failure, a stream
// cut short that is billed more than it reserved, a call still running,
// tasks settled below their reservation and refunded, a top-up, a negative
// adjustment and a key's quota change.
func (e *ledgerEnv) mixedRun() {
	ctx := context.Background()
	e.reserve(e.key, "chat-ok", 1000).Settle(ctx, 600, e.row(e.key, "", 0))
	failed := e.row(e.key, "", 0)
	e.reserve(e.key, "chat-failed", 500).Refund(ctx, &failed)
	e.reserve(e.key, "chat-aborted", 100).Settle(ctx, 250, e.row(e.key, "", 0))
	e.reserve(e.unlim, "chat-unlimited", 400).Settle(ctx, 380, e.row(e.unlim, "", 0))
	e.reserve(e.key, "chat-running", 300)

	task := e.reserve(e.key, store.TaskHoldPrefix+"a", 2000)
	submit := e.taskRow(e.key, store.LogConsume, 2000)
	task.Keep(&submit)
	must(e.t, e.w.Flush(ctx))
	correction := e.taskRow(e.key, store.LogRefund, 500)
	_, err := e.bill.RestoreHold(e.acct(e.key), store.TaskHoldPrefix+"a", 2000).SettleNow(ctx, 1500, &correction)
	must(e.t, err)
	failedTask := e.reserve(e.unlim, store.TaskHoldPrefix+"b", 700)
	submitB := e.taskRow(e.unlim, store.LogConsume, 700)
	failedTask.Keep(&submitB)
	must(e.t, e.w.Flush(ctx))
	refund := e.taskRow(e.unlim, store.LogRefund, 700)
	_, err = e.bill.RestoreHold(e.acct(e.unlim), store.TaskHoldPrefix+"b", 700).RefundNow(ctx, &refund)
	must(e.t, err)

	_, err = e.bill.Credit(ctx, billing.Credit{UserID: e.user.ID, Delta: 20_000, Note: "top-up"})
	must(e.t, err)
	_, err = e.bill.Credit(ctx, billing.Credit{UserID: e.user.ID, Delta: -3_000, Note: "correction"})
	must(e.t, err)
	_, err = e.bill.Credit(ctx, billing.Credit{UserID: e.user.ID, TokenID: e.key.ID, Delta: 5_000})
	must(e.t, err)
	must(e.t, e.w.Flush(ctx))
}

func (e *ledgerEnv) reconcile(w store.Window) *Report {
	e.t.Helper()
	rep, err := Reconcile(context.Background(), e.st, w, time.Now())
	must(e.t, err)
	return rep
}

func lastHour() store.Window {
	now := time.Now()
	return store.Window{Since: now.Add(-time.Hour), Until: now.Add(time.Second)}
}

func TestAMixedRunReconciles(t *testing.T) {
	e := newLedgerEnv(t)
	e.mixedRun()
	// A call refused before its key was known leaves a row of no account.
	must(t, e.st.Logs().Insert(context.Background(), []store.UsageLog{{Type: store.LogError, Model: "m"}}))
	rep := e.reconcile(lastHour())
	if !rep.OK || len(rep.Differences) != 0 {
		t.Fatalf("not ok: %+v", rep.Differences)
	}
	if rep.OpenHolds != 1 {
		t.Errorf("open_holds = %d, want 1 (the running call)", rep.OpenHolds)
	}
	if len(rep.Users) != 1 || len(rep.Tokens) != 2 {
		t.Fatalf("users %+v tokens %+v, want alice and her two keys", rep.Users, rep.Tokens)
	}
	u := rep.Users[0]
	// 100000 + 20000 − 3000 − (600 + 250 + 380) − 1500 charged, 300 held
	wantEnd := int64(100_000 + 20_000 - 3_000 - 600 - 250 - 380 - 1500 - 300)
	stored, err := e.st.Users().Get(context.Background(), e.user.ID)
	must(t, err)
	if u.BalanceStart != 0 || u.BalanceEnd != wantEnd || stored.Quota != wantEnd {
		t.Errorf("user balances %d → %d (stored %d), want 0 → %d", u.BalanceStart, u.BalanceEnd, stored.Quota, wantEnd)
	}
	if u.RowsSum != 120_000-3_000-600-250-380-1500 || u.NetSpend != u.BalanceStart-u.BalanceEnd {
		t.Errorf("user rows_sum %d net_spend %d", u.RowsSum, u.NetSpend)
	}
	limited := rep.Tokens[0]
	if limited.TokenID != e.key.ID || limited.BalanceStart != 50_000 || limited.BalanceEnd != 50_000+5_000-600-250-1500-300 {
		t.Errorf("limited key %+v, want 50000 → %d", limited, 50_000+5_000-600-250-1500-300)
	}
}

func TestABillingWindowThatCutsACallInTwoReconciles(t *testing.T) {
	e := newLedgerEnv(t)
	ctx := context.Background()
	h := e.reserve(e.key, "chat-across", 1000)
	must(t, e.w.Flush(ctx))
	time.Sleep(20 * time.Millisecond)
	since := time.Now()
	time.Sleep(20 * time.Millisecond)
	h.Settle(ctx, 700, e.row(e.key, "", 0))
	e.reserve(e.key, "chat-left-open", 200)
	must(t, e.w.Flush(ctx))
	rep := e.reconcile(store.Window{Since: since, Until: time.Now().Add(time.Second)})
	if !rep.OK {
		t.Fatalf("not ok: %+v", rep.Differences)
	}
	u := rep.Users[0]
	if u.LedgerSum != -700 || u.RowsSum != -700 || u.BalanceStart != 99_000 || u.BalanceEnd != 99_100 {
		t.Fatalf("user %+v, want the charge booked with its row and the balance 99000 → 99100", u)
	}
	early := e.reconcile(store.Window{Since: since.Add(-time.Hour), Until: since})
	if !early.OK || early.OpenHolds != 1 || early.Tokens[0].NetSpend != 1000 || early.Users[0].NetSpend != 1000-100_000 {
		t.Fatalf("window ending mid-call: %+v", early)
	}
}

func TestALostUsageRowIsNamed(t *testing.T) {
	e := newLedgerEnv(t)
	e.mixedRun()
	res, err := e.st.DB().Exec("DELETE FROM usage_logs WHERE type = 'consume' AND quota = 600")
	must(t, err)
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("deleted %d rows", n)
	}
	rep := e.reconcile(lastHour())
	if rep.OK {
		t.Fatal("a deleted row reconciled ok")
	}
	named := map[string]bool{}
	for _, d := range rep.Differences {
		if d.Check == CheckLedgerRows && d.Expected-d.Actual == -600 {
			named[d.Account] = true
			if d.Account == "token" && d.TokenID != e.key.ID {
				t.Errorf("difference names key %d, want %d", d.TokenID, e.key.ID)
			}
		}
	}
	if !named["user"] || !named["token"] {
		t.Fatalf("differences %+v, want the user and the key named", rep.Differences)
	}
	for _, tok := range rep.Tokens {
		if tok.TokenID == e.unlim.ID && !tok.OK {
			t.Errorf("the untouched key is reported off: %+v", tok)
		}
	}
}

func TestABalanceChangedOutsideTheLedgerIsNamed(t *testing.T) {
	e := newLedgerEnv(t)
	e.mixedRun()
	_, err := e.st.DB().Exec("UPDATE users SET quota = quota + 1 WHERE id = ?", e.user.ID)
	must(t, err)
	rep := e.reconcile(lastHour())
	if rep.OK || len(rep.Differences) != 1 || rep.Differences[0].Check != CheckBalanceSpend || rep.Differences[0].UserID != e.user.ID {
		t.Fatalf("differences %+v, want the user's balance named", rep.Differences)
	}
}

// A call that cost nothing moves no quota, yet its lost row is found.
func TestALostRowOfAFreeCallIsNamed(t *testing.T) {
	e := newLedgerEnv(t)
	ctx := context.Background()
	e.reserve(e.key, "chat-free", 0).Settle(ctx, 0, e.row(e.key, "", 0))
	e.reserve(e.key, "chat-paid", 10).Settle(ctx, 10, e.row(e.key, "", 0))
	must(t, e.w.Flush(ctx))
	if rep := e.reconcile(lastHour()); !rep.OK {
		t.Fatalf("not ok before the loss: %+v", rep.Differences)
	}
	_, err := e.st.DB().Exec("DELETE FROM usage_logs WHERE type = 'consume' AND quota = 0")
	must(t, err)
	rep := e.reconcile(lastHour())
	var checks []string
	for _, d := range rep.Differences {
		checks = append(checks, d.Account+" "+d.Check)
	}
	if rep.OK || len(checks) != 2 || checks[0] != "user "+CheckCallsRows || checks[1] != "token "+CheckCallsRows {
		t.Fatalf("differences %v, want the user's and the key's calls named", checks)
	}
}

// A usage row whose quota was changed is named by its id, its table, the
// field and both values; a deleted row by the call the ledger charged.
func TestAnAlteredUsageRowIsNamedWithWhatDiffers(t *testing.T) {
	e := newLedgerEnv(t)
	e.mixedRun()
	var id int64
	must(t, e.st.DB().QueryRow("SELECT id FROM usage_logs WHERE type = 'consume' AND quota = 600").Scan(&id))
	_, err := e.st.DB().Exec("UPDATE usage_logs SET quota = 6 WHERE id = ?", id)
	must(t, err)
	rep := e.reconcile(lastHour())
	found := 0
	for _, d := range rep.Differences {
		if d.Check != CheckLedgerRows {
			continue
		}
		if len(d.Rows) != 1 {
			t.Fatalf("%s difference names rows %+v, want the altered one", d.Account, d.Rows)
		}
		r := d.Rows[0]
		if r.Table != "usage_logs" || r.ID != id || r.Field != "quota" || r.RowValue == nil || *r.RowValue != 6 || r.Ledger == nil || *r.Ledger != 600 || r.LedgerKey == "" {
			t.Fatalf("finding %+v, want usage_logs row %d quota 6 where the ledger charged 600", r, id)
		}
		if want := fmt.Sprintf("usage_logs row %d", id); !strings.Contains(d.Message, want) {
			t.Errorf("message %q does not name %s", d.Message, want)
		}
		found++
	}
	if found != 2 {
		t.Fatalf("differences %+v, want the user's and the key's to name the row", rep.Differences)
	}

	_, err = e.st.DB().Exec("DELETE FROM usage_logs WHERE id = ?", id)
	must(t, err)
	for _, d := range e.reconcile(lastHour()).Differences {
		if d.Check == CheckLedgerRows && (len(d.Rows) != 1 || d.Rows[0].ID != 0 || d.Rows[0].RowValue != nil || *d.Rows[0].Ledger != 600) {
			t.Fatalf("a deleted row: findings %+v, want the call without a row", d.Rows)
		}
	}
}
