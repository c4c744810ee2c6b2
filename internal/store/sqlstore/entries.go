package sqlstore

import (
	"context"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Entries returns the recorded ledger entry of each of keys that has one
// (billing.RecordedEntries): what the writer compares a refused entry with,
// to tell a replay of the same movement from two movements sharing a key.
func (s *Store) Entries(ctx context.Context, keys []string) (map[string]store.LedgerEntry, error) {
	out := make(map[string]store.LedgerEntry, len(keys))
	for len(keys) > 0 {
		n := min(len(keys), 500)
		args := make([]any, n)
		for i, k := range keys[:n] {
			args[i] = k
		}
		rows, err := s.db.QueryContext(ctx, s.Rebind("SELECT id, "+ledgerColumns+" FROM quota_ledger WHERE idem_key IN (?"+
			strings.Repeat(", ?", n-1)+")"), args...)
		if err != nil {
			return nil, wrap(err, "look up ledger entries")
		}
		page, err := collect(rows, scanEntry)
		if err != nil {
			return nil, wrap(err, "look up ledger entries")
		}
		for _, e := range page {
			out[e.Key] = e
		}
		keys = keys[n:]
	}
	return out, nil
}
