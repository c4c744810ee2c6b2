package sqlstore

import (
	"context"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// HoldEnds says how each of holds ended as far as the ledger knows
// (billing.HoldFacts): its settle entry (alone, <hold>:settle, or netted
// with the reserve under <hold>:reserve with the settle's kind) and its
// charge, the sweep's release (<hold>:release), or that it is open and
// kept by a durable record (its owner empty).
func (s *Store) HoldEnds(ctx context.Context, holds []string) (map[string]store.HoldEnd, error) {
	out := make(map[string]store.HoldEnd, len(holds))
	for len(holds) > 0 {
		n := min(len(holds), 250)
		if err := s.holdEndsChunk(ctx, holds[:n], out); err != nil {
			return nil, err
		}
		holds = holds[n:]
	}
	return out, nil
}

func (s *Store) holdEndsChunk(ctx context.Context, holds []string, out map[string]store.HoldEnd) error {
	keys := make([]any, 0, 2*len(holds))
	for _, h := range holds {
		keys = append(keys, h+":"+store.LedgerSettle, h+":"+store.LedgerReserve, h+":"+releaseSuffix)
	}
	rows, err := s.db.QueryContext(ctx, s.Rebind("SELECT idem_key, kind, used FROM quota_ledger WHERE idem_key IN (?"+
		strings.Repeat(", ?", len(keys)-1)+")"), keys...)
	if err != nil {
		return wrap(err, "look up hold ends")
	}
	for rows.Next() {
		var k, kind string
		var used int64
		if err := rows.Scan(&k, &kind, &used); err != nil {
			rows.Close()
			return wrap(err, "look up hold ends")
		}
		hold, suffix, ok := cutLedgerKind(k)
		switch {
		case !ok:
		case kind == store.LedgerSettle:
			e := out[hold]
			e.Settled, e.Charge = true, used
			out[hold] = e
		case suffix == releaseSuffix:
			e := out[hold]
			e.Released = true
			out[hold] = e
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return wrap(err, "look up hold ends")
	}
	args := make([]any, len(holds))
	for i, h := range holds {
		args[i] = h
	}
	rows, err = s.db.QueryContext(ctx, s.Rebind("SELECT hold_key FROM billing_holds WHERE owner = '' AND hold_key IN (?"+
		strings.Repeat(", ?", len(holds)-1)+")"), args...)
	if err != nil {
		return wrap(err, "look up kept holds")
	}
	defer rows.Close()
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return wrap(err, "look up kept holds")
		}
		e := out[h]
		e.Kept = true
		out[h] = e
	}
	return wrap(rows.Err(), "look up kept holds")
}

// releaseSuffix ends the key of the sweep's refund of an abandoned hold
// (billing's releaseItem), told apart from its owner's own refund.
const releaseSuffix = "release"

// cutLedgerKind splits a hold's ledger entry key into the hold key and
// what follows it.
func cutLedgerKind(key string) (hold, suffix string, ok bool) {
	i := strings.LastIndexByte(key, ':')
	if i < 0 {
		return "", "", false
	}
	return key[:i], key[i+1:], true
}
