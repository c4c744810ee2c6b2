package books

import (
	"context"
	"fmt"
	"sort"
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
	users, tokens, teams map[int64]*books
	// holds is how many holds the window's entries opened, less those
	// they ended.
	holds int64
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
// equal the usage rows and that the balance moved by the net spend, and
// counts the holds open at its end. It reads the books rollups: the
// window's whole days' buckets and its cut days' entries and rows.
//
// A call's usage row is written with the end of its reservation, so its
// reserve and settle are booked together when it ends, and a reservation
// still open is spending the rows do not show yet (NetSpend counts it). A
// task's consume row is written with its reservation and corrected when it
// ends, so its entries are booked as they come.
//
// The moment of the reading does not matter (the last argument, kept for
// the callers): the holds open at Until are the ledger's, however long ago
// Until was.
func Reconcile(ctx context.Context, st store.Store, w store.Window, _ time.Time) (*Report, error) {
	lr, err := readBooks(ctx, st, w)
	if err != nil {
		return nil, err
	}
	prior, err := st.Books().LedgerTotals(ctx, store.Window{Until: w.Since})
	if err != nil {
		return nil, err
	}
	before := balancesOf(prior)
	drifts, err := st.Books().Drifts(ctx)
	if err != nil {
		return nil, err
	}
	rep := &Report{OK: true, Since: w.Since, Until: w.Until, OpenHolds: int(before.holds + lr.holds), Users: []Account{}, Tokens: []Account{},
		Teams: []Account{}, Differences: []Difference{}, Plans: []plans.WindowBooks{}, Budgets: []BudgetBooks{}}
	usersBefore, tokensBefore := before.users, before.tokens
	for _, id := range sortedIDs(lr.users) {
		b := lr.users[id]
		if !b.active {
			continue
		}
		// The ledger alone explains every unit a user ever had (its first
		// balance is a recorded top-up), so the balances are the ledger's,
		// and a stored balance that strayed from it shows in the end.
		a := Account{UserID: id, BalanceStart: usersBefore[id], BalanceEnd: usersBefore[id] + b.raw + drifts.Users[id]}
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
		if drifts.Limited[id] {
			a.BalanceStart += drifts.Tokens[id]
		}
		a.BalanceEnd = a.BalanceStart + b.raw
		rep.add(a, b, "token")
	}
	reconcileTeams(before.teams, drifts.Teams, lr, rep)
	return rep, explainRows(ctx, st, w, rep)
}

// readBooks reads the window's ledger totals between two readings of its
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
		lr := &ledgerRead{users: map[int64]*books{}, tokens: map[int64]*books{}, teams: map[int64]*books{}}
		totals, err := st.Books().LedgerTotals(ctx, w)
		if err != nil {
			return nil, err
		}
		for _, t := range totals {
			lr.total(t)
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

// total books one account's entries of one class on its user (or the
// team whose shared balance they moved) and its key.
func (lr *ledgerRead) total(t store.LedgerTotal) {
	bookTotal(lr.payer(t.UserID, t.TeamID), t, t.Delta)
	if t.TokenID != 0 {
		k := account(lr.tokens, t.TokenID)
		k.owner = t.UserID
		bookTotal(k, t, t.TokenDelta)
	}
	lr.holds += holdsOpened(t)
}

// holdsOpened is how many holds the entries opened, less those they ended.
func holdsOpened(t store.LedgerTotal) int64 {
	switch {
	case store.OpensHold(t.Class):
		return t.Entries
	case store.EndsHold(t.Class):
		return -t.Entries
	}
	return 0
}

// bookTotal books entries by their class: a call's reserve opens a
// reservation; its end (settle, refund, release; or a hold reserved and
// ended in one batch) books the charge its row says (Used) and closes the
// reservation it ends (Used + delta); anything else is booked as it comes.
func bookTotal(b *books, t store.LedgerTotal, delta int64) {
	b.active = true
	b.raw += delta
	switch t.Class {
	case store.LedgerClassPlain, store.LedgerClassTaskReserve, store.LedgerClassTaskEnd:
		b.booked += delta
	case store.LedgerClassReserve:
		b.open -= delta
	default:
		if t.Class == store.LedgerClassSettle || t.Class == store.LedgerClassSettlePaired {
			b.settled += t.Entries
		}
		b.booked -= t.Used
		b.open -= t.Used + delta
	}
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

// balances are the accounts' balances the ledger gives at a moment, and
// how many holds were open then.
type balances struct {
	users, tokens, teams map[int64]int64
	holds                int64
}

// balancesOf folds the totals of every entry before a moment: a user's
// own balance (not its team's), its keys' and its teams' shared ones.
func balancesOf(totals []store.LedgerTotal) balances {
	b := balances{users: map[int64]int64{}, tokens: map[int64]int64{}, teams: map[int64]int64{}}
	for _, t := range totals {
		switch {
		case t.TeamID != 0:
			b.teams[t.TeamID] += t.Delta
		case t.UserID != 0:
			b.users[t.UserID] += t.Delta
		}
		if t.TokenID != 0 {
			b.tokens[t.TokenID] += t.TokenDelta
		}
		b.holds += holdsOpened(t)
	}
	return b
}
