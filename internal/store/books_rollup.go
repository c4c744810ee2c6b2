package store

import (
	"bytes"
	"strings"
)

// The books rollups keep, per UTC day and account, what reconciliation
// needs of the ledger and of the usage rows (CONTRACT §13, §20), so a
// reconciliation of months reads buckets instead of every entry and row.

// LedgerTotal sums one account's ledger entries of one class.
type LedgerTotal struct {
	UserID, TokenID, TeamID int64
	Class                   string
	Entries                 int64
	Delta, TokenDelta, Used int64
}

// The ledger classes: how reconciliation books an entry. A call's hold
// (its key is not a task's) books its charge when it ends; anything else
// books its delta as it comes. "Paired" is a hold reserved and ended
// within one batch of the writer, stored as one entry under the reserve's
// key with the end's kind: it opens and ends no hold.
const (
	LedgerClassPlain        = "plain"
	LedgerClassReserve      = "reserve"
	LedgerClassSettle       = "settle"
	LedgerClassEnd          = "end"
	LedgerClassSettlePaired = "settle_paired"
	LedgerClassEndPaired    = "end_paired"
	LedgerClassTaskReserve  = "task_reserve"
	LedgerClassTaskEnd      = "task_end"
)

// LedgerClassOf is the class of an entry, read from its key and kind.
func LedgerClassOf(e LedgerEntry) string {
	hold, part, ok := HoldOf(e.Key)
	switch {
	case !ok:
		return LedgerClassPlain
	case strings.HasPrefix(hold, TaskHoldPrefix):
		switch {
		case e.Kind == LedgerReserve:
			return LedgerClassTaskReserve
		case part == LedgerReserve:
			return LedgerClassPlain
		}
		return LedgerClassTaskEnd
	case e.Kind == LedgerReserve:
		return LedgerClassReserve
	case part == LedgerReserve && e.Kind == LedgerSettle:
		return LedgerClassSettlePaired
	case part == LedgerReserve:
		return LedgerClassEndPaired
	case e.Kind == LedgerSettle:
		return LedgerClassSettle
	}
	return LedgerClassEnd
}

// OpensHold and EndsHold tell the classes whose entries open and end a
// hold of their own (a paired entry does neither).
func OpensHold(class string) bool {
	return class == LedgerClassReserve || class == LedgerClassTaskReserve
}

// EndsHold: see OpensHold.
func EndsHold(class string) bool {
	return class == LedgerClassSettle || class == LedgerClassEnd || class == LedgerClassTaskEnd
}

// RowBooksOf is what a usage row adds to its account's books: whether it
// is a task's row, the team whose shared balance it moved (0: the user's
// own) and the quota it moved (none for a row that drew from a plan, whose
// quota the plan windows' books prove). The markers are read as the
// database reads them in LogTotals (a substring of other).
func RowBooksOf(l UsageLog) (task bool, team, quota int64) {
	task = bytes.Contains(l.Other, []byte(`"surface":"task"`))
	if bytes.Contains(l.Other, []byte(TeamPaidMarker)) {
		team = l.TeamID
	}
	if !bytes.Contains(l.Other, []byte(PlanMarker)) {
		quota = l.Quota
	}
	return task, team, quota
}
