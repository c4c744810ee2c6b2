package sqlstore

import (
	"context"
	"database/sql"
	"time"
)

// onlineLockKey is the advisory lock of a migration's Online statements.
const onlineLockKey = 7_307_150_003 // arbitrary, fixed

// runOnline runs m's Online statements unless the database has m. It
// returns the migration lock's release (it takes the lock anew) and the
// release of the lock of the statements, to call once m is recorded.
//
// A concurrent index build waits for every transaction of the database
// that holds an older snapshot, and a process blocked in
// pg_advisory_lock holds one (its SELECT is running): a node of an
// earlier release starting while the build held the migration lock would
// deadlock with it, and PostgreSQL would cancel one of them. So the build
// runs under a lock of its own, which only releases that know it ask for
// (by polling, holding no snapshot while they wait), with the migration
// lock released: an earlier release takes that lock, finds nothing of its
// own to apply, and goes on. The migration lock is taken again after the
// statements, so m is recorded and later migrations run as before; a node
// that waited for the build finds m recorded.
func runOnline(ctx context.Context, conn *sql.Conn, d Dialect, m Migration, unlock func()) (func(), func(), error) {
	none := func() {}
	if done, err := migrationApplied(ctx, conn, d, m.Version); err != nil || done {
		return unlock, none, err
	}
	unlock()
	releaseOnline, err := advisoryLock(ctx, conn, d, onlineLockKey, "turnpike_migrations_online")
	if err != nil {
		return none, none, err
	}
	done, err := migrationApplied(ctx, conn, d, m.Version)
	for _, stmt := range m.Online[d] {
		if err != nil || done {
			break
		}
		_, err = conn.ExecContext(ctx, stmt)
	}
	if err != nil {
		releaseOnline()
		return none, none, err
	}
	if unlock, err = lockMigrations(ctx, conn, d); err != nil {
		releaseOnline()
		return none, none, err
	}
	return unlock, releaseOnline, nil
}

func migrationApplied(ctx context.Context, conn *sql.Conn, d Dialect, version int) (bool, error) {
	var n int
	err := conn.QueryRowContext(ctx, Rebind(d, "SELECT COUNT(*) FROM schema_migrations WHERE version = ?"), version).Scan(&n)
	return n > 0, err
}

// advisoryPoll is how often a PostgreSQL process waiting for an advisory
// lock asks again.
const advisoryPoll = 200 * time.Millisecond

// pollAdvisoryLock takes a PostgreSQL advisory lock by asking until it is
// free rather than waiting inside pg_advisory_lock: a waiting statement
// holds a snapshot, and CREATE INDEX CONCURRENTLY in the lock holder's
// migration waits for every older snapshot to end, so two nodes started
// together would deadlock (and PostgreSQL would cancel one of them).
func pollAdvisoryLock(ctx context.Context, conn *sql.Conn, key int64) error {
	for {
		var got bool
		if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&got); err != nil {
			return err
		}
		if got {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(advisoryPoll):
		}
	}
}
