package books

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/plans"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Report is the reconciliation of a window (CONTRACT §13).
type Report struct {
	OK    bool      `json:"ok"`
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
	// OpenHolds is how many reservations were still open at Until.
	OpenHolds int       `json:"open_holds"`
	Users     []Account `json:"users"`
	Tokens    []Account `json:"tokens"`
	// Teams are the shared balances of teams (CONTRACT §18), proved like
	// users'.
	Teams       []Account    `json:"teams"`
	Differences []Difference `json:"differences"`
	// Plans are the open plan windows' books (ReconcilePlans).
	Plans []plans.WindowBooks `json:"plans"`
	// Budgets are the period budgets of teams and organisations
	// (ReconcileBudgets).
	Budgets []BudgetBooks `json:"budgets"`
}

// Account is one user's or key's books over the window. LedgerSum is what
// the ledger's entries book against usage rows (a call's reserve and
// settle together as its charge, when it ends); RowsSum is the usage
// rows (top-ups and adjustments less consumes plus refunds); NetSpend is
// RowsSum's spending plus the growth of the reservations open, which
// BalanceStart − BalanceEnd must equal.
type Account struct {
	UserID       int64 `json:"user_id"`
	TokenID      int64 `json:"token_id,omitempty"`
	TeamID       int64 `json:"team_id,omitempty"`
	LedgerSum    int64 `json:"ledger_sum"`
	RowsSum      int64 `json:"rows_sum"`
	BalanceStart int64 `json:"balance_start"`
	BalanceEnd   int64 `json:"balance_end"`
	NetSpend     int64 `json:"net_spend"`
	OK           bool  `json:"ok"`
}

// Checks a Difference names.
const (
	CheckLedgerRows   = "ledger_vs_rows"
	CheckCallsRows    = "calls_vs_rows"
	CheckBalanceSpend = "balance_vs_spend"
)

// Difference is one account whose books do not agree.
type Difference struct {
	Account  string `json:"account"` // user, token or team
	UserID   int64  `json:"user_id"`
	TokenID  int64  `json:"token_id,omitempty"`
	TeamID   int64  `json:"team_id,omitempty"`
	Check    string `json:"check"`
	Expected int64  `json:"expected"`
	Actual   int64  `json:"actual"`
	Message  string `json:"message"`
	// Rows names the usage rows (and calls without one) behind a
	// difference of the ledger and the rows.
	Rows []RowFinding `json:"rows,omitempty"`
}

// books is one account's sums while the ledger and the rows are read.
type books struct {
	active bool // moved or had rows in the window
	owner  int64
	raw    int64 // the entries' movement of the balance
	booked int64
	open   int64 // growth of the call reservations open
	rows   int64
	// settled is the calls the ledger settled and callRows their consume
	// rows: one each, so a lost row of a call that cost nothing (a free
	// model) shows too.
	settled, callRows int64
}

type ledgerRead struct {
	w                    store.Window
	users, tokens, teams map[int64]*books
	open, unmatched      map[string]bool
}

func account(m map[int64]*books, id int64) *books {
	b := m[id]
	if b == nil {
		b = &books{}
		m[id] = b
	}
	return b
}

// Reconcile proves, per user and per key over w, that the ledger's entries
// equal the usage rows and that the balance moved by the net spend. For a
// window ending at now or later, the reservations still open from before
// it (the open holds) are counted too.
//
// A call's usage row is written with the end of its reservation, so its
// reserve and settle are booked together when it ends, and a reservation
// still open is spending the rows do not show yet (NetSpend counts it). A
// task's consume row is written with its reservation and corrected when it
// ends, so its entries are booked as they come.
func Reconcile(ctx context.Context, st store.Store, w store.Window, now time.Time) (*Report, error) {
	lr, err := readBooks(ctx, st, w)
	if err != nil {
		return nil, err
	}
	usersBefore, tokensBefore, err := st.Books().BalancesBefore(ctx, w.Since)
	if err != nil {
		return nil, err
	}
	rep := &Report{OK: true, Since: w.Since, Until: w.Until, OpenHolds: len(lr.open), Users: []Account{}, Tokens: []Account{},
		Teams: []Account{}, Differences: []Difference{}, Plans: []plans.WindowBooks{}, Budgets: []BudgetBooks{}}
	if !w.Until.Before(now) {
		if err := countHoldsOpenAcross(ctx, st, w, rep); err != nil {
			return nil, err
		}
	}
	for _, id := range sortedIDs(lr.users) {
		b := lr.users[id]
		if !b.active {
			continue
		}
		// The ledger alone explains every unit a user ever had (its first
		// balance is a recorded top-up), so the balances are the ledger's,
		// and a stored balance that strayed from it shows in the end.
		drift, err := st.Books().UserDrift(ctx, id)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		a := Account{UserID: id, BalanceStart: usersBefore[id], BalanceEnd: usersBefore[id] + b.raw + drift}
		rep.add(a, b, "user")
	}
	for _, id := range sortedIDs(lr.tokens) {
		b := lr.tokens[id]
		if !b.active {
			continue
		}
		// A limited key's balance is set outside the ledger when it is made
		// or switched from unlimited, so its start is read back from its
		// stored balance; an unlimited key's balance is its movements.
		a := Account{UserID: b.owner, TokenID: id, BalanceStart: tokensBefore[id]}
		start, limited, err := st.Books().TokenBalanceAt(ctx, id, w.Since)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if limited {
			a.BalanceStart = start
		}
		a.BalanceEnd = a.BalanceStart + b.raw
		rep.add(a, b, "token")
	}
	if err := reconcileTeams(ctx, st, w, lr, rep); err != nil {
		return nil, err
	}
	return rep, explainRows(ctx, st, w, rep)
}

// countHoldsOpenAcross adds the holds opened before the window that are
// still open (a window that reaches now) to its open holds.
func countHoldsOpenAcross(ctx context.Context, st store.Store, w store.Window, rep *Report) error {
	holds, err := st.Holds().List(ctx)
	if err != nil {
		return err
	}
	for _, h := range holds {
		if h.CreatedAt.Before(w.Since) {
			rep.OpenHolds++
		}
	}
	return nil
}

// readBooks reads the window's ledger entries between two readings of its
// usage rows, and again while the two differ: an entry and its row are
// committed together, so rows that did not change while the ledger was
// read belong to the entries read (the billing writers of running nodes
// keep committing meanwhile).
func readBooks(ctx context.Context, st store.Store, w store.Window) (*ledgerRead, error) {
	before, err := st.Books().LogTotals(ctx, w)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		lr := &ledgerRead{w: w, users: map[int64]*books{}, tokens: map[int64]*books{}, teams: map[int64]*books{},
			open: map[string]bool{}, unmatched: map[string]bool{}}
		if err := st.Books().EachEntry(ctx, w.Since, lr.entry); err != nil {
			return nil, err
		}
		after, err := st.Books().LogTotals(ctx, w)
		if err != nil {
			return nil, err
		}
		if sameTotals(before, after) || attempt == 2 {
			for _, t := range after {
				lr.row(t)
			}
			return lr, nil
		}
		before = after
	}
}

func sameTotals(a, b []store.LogTotal) bool {
	if len(a) != len(b) {
		return false
	}
	seen := make(map[store.LogTotal]bool, len(a))
	for _, t := range a {
		seen[t] = true
	}
	for _, t := range b {
		if !seen[t] {
			return false
		}
	}
	return true
}

// entry books one ledger entry on its user (or the team whose shared
// balance it moved) and its key.
func (lr *ledgerRead) entry(e store.LedgerEntry) error {
	u := lr.payer(e.UserID, e.TeamID)
	var t *books
	if e.TokenID != 0 {
		t = account(lr.tokens, e.TokenID)
		t.owner = e.UserID
	}
	if !e.CreatedAt.Before(lr.w.Until) {
		return nil
	}
	// The kind says what an entry did: the billing writer stores a hold
	// reserved and ended within one batch as one entry, under the
	// reserve's key with the end's kind.
	hold, part, isHold := store.HoldOf(e.Key)
	call := isHold && !strings.HasPrefix(hold, store.TaskHoldPrefix)
	book(u, e, e.Delta, call)
	if t != nil {
		book(t, e, e.TokenDelta, call)
	}
	if isHold && (e.Kind == store.LedgerReserve || part != store.LedgerReserve) {
		lr.track(hold, e.Kind)
	}
	return nil
}

func book(b *books, e store.LedgerEntry, delta int64, call bool) {
	b.active = true
	b.raw += delta
	switch {
	case !call:
		b.booked += delta
	case e.Kind == store.LedgerReserve:
		b.open -= delta
	default:
		if e.Kind == store.LedgerSettle {
			b.settled++
		}
		// A call's end: its row says the charge (Used); the reservation
		// it ends (Used + delta) is no longer open.
		b.booked -= e.Used
		b.open -= e.Used + delta
	}
}

// track keeps the holds reserved in the window and not ended in it. Nodes'
// clocks may put an end before its reserve, so an end of a hold not seen
// yet waits for it.
func (lr *ledgerRead) track(hold, kind string) {
	if kind == store.LedgerReserve {
		if lr.unmatched[hold] {
			delete(lr.unmatched, hold)
			return
		}
		lr.open[hold] = true
		return
	}
	if lr.open[hold] {
		delete(lr.open, hold)
		return
	}
	lr.unmatched[hold] = true
}

// row books one total of usage rows: what it did to the balance.
func (lr *ledgerRead) row(t store.LogTotal) {
	var v int64
	switch t.Type {
	case store.LogConsume:
		v = -t.Quota
	case store.LogRefund, store.LogTopUp, store.LogAdjust:
		v = t.Quota
	}
	keyQuota := t.TokenID != 0 && (t.Type == store.LogTopUp || t.Type == store.LogAdjust)
	if t.UserID == 0 && t.Team == 0 {
		return // a row of no account (a call refused before its key was known) moves nothing
	}
	var calls int64
	if t.Type == store.LogConsume && !t.Task {
		calls = t.Rows
	}
	if !keyQuota {
		b := lr.payer(t.UserID, t.Team)
		b.rows += v
		b.callRows += calls
		b.active = true
	}
	if t.TokenID != 0 {
		b := account(lr.tokens, t.TokenID)
		b.rows += v
		b.callRows += calls
		b.owner, b.active = t.UserID, true
	}
}

// add closes one account's books into the report.
func (rep *Report) add(a Account, b *books, kind string) {
	a.LedgerSum, a.RowsSum = b.booked, b.rows
	a.NetSpend = -b.rows + b.open
	a.OK = true
	name := fmt.Sprintf("user %d", a.UserID)
	switch kind {
	case "token":
		name = fmt.Sprintf("API key %d (of user %d)", a.TokenID, a.UserID)
	case "team":
		name = fmt.Sprintf("team %d", a.TeamID)
	}
	if a.LedgerSum != a.RowsSum {
		a.OK = false
		rep.Differences = append(rep.Differences, Difference{Account: kind, UserID: a.UserID, TokenID: a.TokenID, TeamID: a.TeamID,
			Check: CheckLedgerRows, Expected: a.LedgerSum, Actual: a.RowsSum,
			Message: fmt.Sprintf("%s: the ledger books %d quota units in the window but its usage rows sum to %d (%+d): a usage row is missing, extra or altered",
				name, a.LedgerSum, a.RowsSum, a.RowsSum-a.LedgerSum)})
	}
	if b.settled != b.callRows {
		a.OK = false
		rep.Differences = append(rep.Differences, Difference{Account: kind, UserID: a.UserID, TokenID: a.TokenID, TeamID: a.TeamID,
			Check: CheckCallsRows, Expected: b.settled, Actual: b.callRows,
			Message: fmt.Sprintf("%s: the ledger settled %d calls in the window but %d consume rows record them: a usage row is missing or extra",
				name, b.settled, b.callRows)})
	}
	if moved := a.BalanceStart - a.BalanceEnd; moved != a.NetSpend {
		a.OK = false
		rep.Differences = append(rep.Differences, Difference{Account: kind, UserID: a.UserID, TokenID: a.TokenID, TeamID: a.TeamID,
			Check: CheckBalanceSpend, Expected: a.NetSpend, Actual: moved,
			Message: fmt.Sprintf("%s: the balance went from %d to %d (%d spent) but the net spend is %d",
				name, a.BalanceStart, a.BalanceEnd, moved, a.NetSpend)})
	}
	if !a.OK {
		rep.OK = false
	}
	switch kind {
	case "token":
		rep.Tokens = append(rep.Tokens, a)
	case "team":
		rep.Teams = append(rep.Teams, a)
	default:
		rep.Users = append(rep.Users, a)
	}
}

func sortedIDs(m map[int64]*books) []int64 {
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}
