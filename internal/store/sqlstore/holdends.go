package sqlstore

import (
	"context"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// HoldEnds says how each of holds ended as far as the ledger knows
// (billing.HoldFacts): its settle entry (alone, <hold>:settle, or netted
// with the reserve under <hold>:reserve with the settle's kind) and its
// charge, or that it is open and kept by a durable record (its owner empty).
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
		keys = append(keys, h+":"+store.LedgerSettle, h+":"+store.LedgerReserve)
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
		if hold, ok := cutLedgerKind(k); ok && kind == store.LedgerSettle {
			out[hold] = store.HoldEnd{Settled: true, Charge: used}
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

// cutLedgerKind is the hold key of a hold's ledger entry key.
func cutLedgerKind(key string) (string, bool) {
	i := strings.LastIndexByte(key, ':')
	if i < 0 {
		return "", false
	}
	return key[:i], true
}
