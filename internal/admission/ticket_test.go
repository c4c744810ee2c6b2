package admission

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

// ticketEnv is a gateway's money over a fresh database: a user with 1000
// and a day budget of 800, and two processes' billing (a restart, or
// another node) sharing it.
type ticketEnv struct {
	st     *sqlstore.Store
	limits *ratelimit.Service
	a, b   Gate
	acct   billing.Account
}

func newTicketEnv(t *testing.T) *ticketEnv {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenStore(ctx, sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	u := &store.User{Username: "u", Role: store.RoleUser, Group: "default", Quota: 1000}
	if err := st.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	limits := ratelimit.New(st.Traffic(), nil, nil)
	if err := limits.Set(ctx, store.SubjectUser, strconv.FormatInt(u.ID, 10), ratelimit.Limits{PeriodQuota: 800, Period: ratelimit.Day}); err != nil {
		t.Fatal(err)
	}
	e := &ticketEnv{st: st, limits: limits, acct: billing.Account{UserID: u.ID, Group: "default"}}
	e.a, e.b = e.process(t), e.process(t)
	return e
}

func (e *ticketEnv) process(t *testing.T) Gate {
	w := billing.NewWriter(e.st, slog.New(slog.DiscardHandler), time.Millisecond, 64)
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	svc := billing.NewService(billing.NewMemoryBalances(e.st), w, 500000)
	if err := svc.TakeLease(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	return Gate{Billing: svc, Limits: e.limits}
}

// books are the user's balance in the database and the budget's use.
func (e *ticketEnv) books(t *testing.T, g Gate) (int64, int64) {
	t.Helper()
	ctx := context.Background()
	if err := g.Billing.Writer().Flush(ctx); err != nil {
		t.Fatal(err)
	}
	u, err := e.st.Users().Get(ctx, e.acct.UserID)
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.limits.Period(ctx, store.SubjectUser, e.acct.UserID)
	if err != nil {
		t.Fatal(err)
	}
	return u.Quota, p.Used
}

// A kept ticket written down as its record is restored by another process
// and ended there once, with its budget share: the second end moves
// nothing, neither money nor budget.
func TestADurableTicketIsRestoredFromItsRecordAndEndedOnce(t *testing.T) {
	for _, tc := range []struct {
		name        string
		end         func(tk *Ticket) (bool, error)
		user, spent int64
	}{
		{"settled", func(tk *Ticket) (bool, error) {
			row := store.UsageLog{UserID: 1, Type: store.LogConsume, Quota: 300, RequestID: "r"}
			return tk.SettleNow(context.Background(), 300, &row)
		}, 700, 300},
		{"refunded", func(tk *Ticket) (bool, error) { return tk.RefundNow(context.Background(), nil) }, 1000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTicketEnv(t)
			ctx := context.Background()
			tk, err := e.a.Hold(ctx, e.acct, "m", "batch:x:m", 500, nil)
			if err != nil {
				t.Fatal(err)
			}
			tk.Keep(nil)
			if user, spent := e.books(t, e.a); user != 500 || spent != 500 {
				t.Fatalf("after the hold: user %d, budget used %d; want 500 and 500", user, spent)
			}
			raw, _ := json.Marshal(tk.Record())
			var rec Record
			if err := json.Unmarshal(raw, &rec); err != nil || rec.Key != "batch:x:m" || rec.Reserved != 500 ||
				rec.Budget != 500 || len(rec.BudgetKeys) != 1 || rec.Model != "m" || rec.HeldNS == 0 {
				t.Fatalf("record %s (%v)", raw, err)
			}
			for i, want := range []bool{true, false} {
				won, err := tc.end(e.b.Restore(rec))
				if err != nil || won != want {
					t.Fatalf("end %d: won %v, err %v; want %v", i+1, won, err, want)
				}
			}
			if user, spent := e.books(t, e.b); user != tc.user || spent != tc.spent {
				t.Errorf("user %d, budget used %d; want %d and %d", user, spent, tc.user, tc.spent)
			}
		})
	}
}

// A deferred hold that does not fit the period budget is refused with
// budget_exceeded before the balance is touched.
func TestADurableTicketOverThePeriodBudgetIsRefusedBeforeTheBalance(t *testing.T) {
	e := newTicketEnv(t)
	_, err := e.a.Hold(context.Background(), e.acct, "m", "batch:y:m", 900, nil)
	if ir.As(err).Code != "budget_exceeded" {
		t.Fatalf("err %v, want budget_exceeded", err)
	}
	if user, spent := e.books(t, e.a); user != 1000 || spent != 0 {
		t.Errorf("user %d, budget used %d after a refusal", user, spent)
	}
}

// Refunding one reservation of a ticket that was re-reserved gives back
// the budget share that went with it, so the two shares do not stay
// counted (a fallback model re-reserving a live call).
func TestReplacingAReservationGivesItsBudgetShareBack(t *testing.T) {
	e := newTicketEnv(t)
	ctx := context.Background()
	var tk Ticket
	tk.Limits = e.limits.For(ratelimit.Subject{UserID: e.acct.UserID, Group: "default", Model: "m"})
	first, err := e.a.Reserve(ctx, ctx, &tk, e.acct, "call-1", 200, nil)
	if err != nil {
		t.Fatal(err)
	}
	firstBudget := tk.Budget
	second, err := e.a.Reserve(ctx, ctx, &tk, e.acct, "call-2", 300, nil)
	if err != nil {
		t.Fatal(err)
	}
	(&Ticket{Budget: firstBudget}).Refund(ctx, first, nil)
	tk.Settle(ctx, second, 250, store.UsageLog{UserID: e.acct.UserID, RequestID: "call-2"}, 0)
	if user, spent := e.books(t, e.a); user != 750 || spent != 250 {
		t.Errorf("user %d, budget used %d; want 750 and 250", user, spent)
	}
}
