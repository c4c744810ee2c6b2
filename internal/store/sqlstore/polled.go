package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// The loops that follow what other nodes change (API keys every second,
// prices every two, channel health, guardrails, traffic limits) run the
// same few queries all day, also with no traffic at all. Parsed anew at
// every tick, SQLite's parser was a quarter of an idle gateway's CPU; so
// each of those query texts is prepared once, and database/sql prepares
// it on a connection the first time that connection runs it.

// polledStmts are the prepared poll queries, by query text.
type polledStmts struct {
	m sync.Map // string → *sql.Stmt
}

// polled returns q (rebound) prepared, preparing it on first use; a failed
// preparation is not kept, so the next tick tries again. It is not meant
// for a query inside a transaction.
func (s *Store) polled(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := s.polls.m.Load(q); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := s.db.PrepareContext(ctx, s.Rebind(q))
	if err != nil {
		return nil, err
	}
	if prev, loaded := s.polls.m.LoadOrStore(q, st); loaded {
		st.Close() // another poller prepared it meanwhile
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// pollQuery runs the poll query q.
func (s *Store) pollQuery(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := s.polled(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// pollQueryRow runs the poll query q for one row; a failed preparation is
// reported by Scan, as a failed query is.
func (s *Store) pollQueryRow(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
	st, err := s.polled(ctx, q)
	if err != nil {
		return failedRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

type failedRow struct{ err error }

func (r failedRow) Scan(...any) error { return r.err }

// close closes every prepared poll query.
func (p *polledStmts) close() error {
	var errs []error
	p.m.Range(func(q, st any) bool {
		errs = append(errs, st.(*sql.Stmt).Close())
		p.m.Delete(q)
		return true
	})
	return errors.Join(errs...)
}
