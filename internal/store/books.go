package store

import (
	"context"
	"strings"
	"time"
)

// Window is the half-open time range [Since, Until) a report covers.
type Window struct {
	Since, Until time.Time
}

// LogTotal is the sum of one account's usage rows of one type in a window,
// the rows of tasks (other.surface "task") apart.
type LogTotal struct {
	UserID  int64
	TokenID int64
	Type    string
	Task    bool
	Rows    int64
	Quota   int64
	// Team is the team whose shared balance the rows moved (their other
	// holds TeamPaidMarker); 0: the user's own balance.
	Team int64
}

// Drifts are the accounts' stored balances less the sums of their ledger
// entries (a user's own entries, not those of its teams' shared
// balances). Limited holds the keys with a limited balance; an unlimited
// key's drift means nothing.
type Drifts struct {
	Users, Tokens, Teams map[int64]int64
	Limited              map[int64]bool
}

// BooksRepo reads what the operator's books are made of (margin and
// reconciliation reports), in bounded pages so that a long window never
// holds a connection or the whole window in memory.
type BooksRepo interface {
	// EachLog calls fn for every usage row of one of types created in w,
	// oldest first (by created_at, then id).
	EachLog(ctx context.Context, w Window, types []string, fn func(UsageLog) error) error
	// EachChannelLog calls fn for every usage row of one of types that
	// channelID served, created in w, in creation order.
	EachChannelLog(ctx context.Context, channelID int64, w Window, types []string, fn func(UsageLog) error) error
	// LogTotals sums the usage rows created in w per user, key, type and
	// whether they are a task's.
	LogTotals(ctx context.Context, w Window) ([]LogTotal, error)
	// EachEntry calls fn for every ledger entry created at or after since,
	// in creation order.
	EachEntry(ctx context.Context, since time.Time, fn func(LedgerEntry) error) error
	// BalancesBefore sums the ledger's Delta per user (entries of a
	// team's shared balance apart) and TokenDelta per key over the entries
	// created before t: the balances the ledger alone gives at t.
	BalancesBefore(ctx context.Context, t time.Time) (users, tokens map[int64]int64, err error)
	// TeamsBefore is BalancesBefore for teams' shared balances: Delta per
	// team over the entries with a team created before t.
	TeamsBefore(ctx context.Context, t time.Time) (map[int64]int64, error)
	// Drifts are every account's stored balance less the sum of its
	// ledger entries, read in one statement: zero for a user or a team
	// unless its balance was changed outside the ledger; for a limited
	// key, the balance it was given when it was made or limited.
	Drifts(ctx context.Context) (Drifts, error)
	// Names reads the names of the channels, users (their username) or
	// keys of ids (by "channel", "user" or "token"), in one statement per
	// 500; an id of no record is left out.
	Names(ctx context.Context, by string, ids []int64) (map[int64]string, error)
	// LedgerTotals sums the ledger's entries created in w per account and
	// class (LedgerClassOf); a zero Since is the ledger's beginning.
	LedgerTotals(ctx context.Context, w Window) ([]LedgerTotal, error)
}

// TaskHoldPrefix begins the hold key of every task. A task's hold is kept
// by the task record, and its consume row is written when it is submitted,
// while a call's row is written when its hold ends: reconciliation books
// the two differently.
const TaskHoldPrefix = "task-"

// BatchHoldPrefix begins the hold key of every batch ticket
// (batch:<batch id>:…). A batch's holds are kept by its record and its
// rows are written when it is billed.
const BatchHoldPrefix = "batch:"

// HoldOf splits a ledger entry's key into the hold it belongs to and the
// hold movement's kind (reserve, settle, refund, release); ok is false for
// an entry of no hold (a top-up or an adjustment).
func HoldOf(key string) (hold, part string, ok bool) {
	i := strings.LastIndexByte(key, ':')
	if i < 0 {
		return "", "", false
	}
	switch part = key[i+1:]; part {
	case LedgerReserve, LedgerSettle, LedgerRefund, "release":
		return key[:i], part, true
	}
	return "", "", false
}
