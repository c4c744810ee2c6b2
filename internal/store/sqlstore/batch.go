package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/turnpike-gw/turnpike/internal/store"
)

var _ store.BatchWriter = (*Store)(nil)

// WriteBatch records ledger entries as LedgerRepo.Apply does and inserts
// usage logs as LogRepo.Insert does, in a single transaction: either the
// whole batch is stored or nothing of it is.
func (s *Store) WriteBatch(ctx context.Context, entries []store.LedgerEntry, logs []store.UsageLog) error {
	return wrap(s.write(ctx, entries, logs), "write billing batch")
}

// write is the transaction behind Apply and WriteBatch.
func (s *Store) write(ctx context.Context, entries []store.LedgerEntry, logs []store.UsageLog) error {
	if len(entries) == 0 && len(logs) == 0 {
		return nil
	}
	if err := checkKeys(entries); err != nil {
		return err
	}
	b, err := s.batch(ctx)
	if err != nil {
		return err
	}
	entries, pos := uniqueKeys(entries)
	stamp := now()
	careful := false
	return s.withTx(ctx, func(tx *sql.Tx) error {
		if len(entries) > 0 {
			err := s.applyLedger(ctx, tx, b, entries, pos, stamp, careful)
			if errors.Is(err, errLedgerRace) {
				careful = true
			}
			if err != nil {
				return err
			}
		}
		return insertLogs(ctx, tx, b, logs, stamp)
	})
}
