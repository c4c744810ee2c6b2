package billing

import (
	"context"
)

// A move of a team's shared balance is journaled apart from the moves of
// users' own balances: in a hash and a set of nodes of its own. A node of
// a version before teams reads a record's payer as a plain user id; it
// would take a team record for one it cannot read and drop it — the
// move never undone, an answered call's settle never written. In their
// own hash it never sees them, while a node of this version reconciles
// both (and reads a team record in the users' hash too, as the version
// that first journaled teams wrote them there).

// journal is one of a node's journals: its hash and the set of nodes that
// have one of its kind.
type journal struct{ hash, set string }

func (r *redisBalances) teamJournalKey(e, node string) string {
	return r.prefix + e + ":tjournal:" + node
}

func (r *redisBalances) teamJournalSet(e string) string { return r.prefix + e + ":tjournals" }

// journals are node's journals in epoch e: the users' and the teams'.
func (r *redisBalances) journals(e, node string) [2]journal {
	return [2]journal{{r.journalKey(e, node), r.journalSet(e)}, {r.teamJournalKey(e, node), r.teamJournalSet(e)}}
}

// journalFor is the journal of node that records moves of p's balance.
func (r *redisBalances) journalFor(e, node string, p Payer) journal {
	return r.journals(e, node)[b2i(p.team())]
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

// pending counts node's journal records in epoch e, in both journals.
func (r *redisBalances) pending(ctx context.Context, e, node string) (int64, error) {
	var n int64
	for _, j := range r.journals(e, node) {
		c, err := r.rdb.HLen(ctx, j.hash).Result()
		if err != nil {
			return 0, err
		}
		n += c
	}
	return n, nil
}
