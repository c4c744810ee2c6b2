package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// holdsMigration adds the open holds and the leases of their owners. It is
// numbered 5, not 2, so that another core migration written in parallel
// can take the next free numbers without colliding. Times are Unix
// milliseconds, compared the same way on every dialect.
var holdsMigration = Migration{Version: 5, Name: "billing holds", SQL: `
CREATE TABLE billing_holds (
	hold_key {{string}} NOT NULL PRIMARY KEY,
	owner {{string}} NOT NULL,
	user_id {{bigint}} NOT NULL,
	token_id {{bigint}} NOT NULL,
	amount {{bigint}} NOT NULL,
	created_at {{bigint}} NOT NULL
) {{options}};
CREATE INDEX billing_holds_owner_idx ON billing_holds (owner);

CREATE TABLE billing_nodes (
	node_id {{string}} NOT NULL PRIMARY KEY,
	lease_until {{bigint}} NOT NULL
) {{options}};
`}

type holdRepo struct{ s *Store }

// Holds returns the open holds and node leases.
func (s *Store) Holds() store.HoldRepo { return holdRepo{s} }

const holdColumns = "hold_key, owner, user_id, token_id, amount, created_at, team_id"

// Lease inserts or extends node's lease. The update comes first: it is the
// common case, every few seconds for the life of the process.
func (r holdRepo) Lease(ctx context.Context, node string, until time.Time) error {
	ms := until.UnixMilli()
	res, err := r.s.db.ExecContext(ctx, r.s.Rebind("UPDATE billing_nodes SET lease_until = ? WHERE node_id = ?"), ms, node)
	if err != nil {
		return wrap(err, "renew lease")
	}
	// MySQL reports 0 affected rows when the value did not change; a lease
	// renewed within the same millisecond is still there.
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		return nil
	}
	_, err = r.s.db.ExecContext(ctx, r.s.Rebind("INSERT INTO billing_nodes (node_id, lease_until) VALUES (?, ?)"), node, ms)
	if err != nil && classify(err) == classUnique {
		return nil
	}
	return wrap(err, "take lease")
}

// Lapsed lists holds whose owner's lease is over or missing. Holds handed
// to a durable record (empty owner) are never listed.
func (r holdRepo) Lapsed(ctx context.Context, now time.Time, except string, limit int) ([]store.Hold, error) {
	q := "SELECT h.hold_key, h.owner, h.user_id, h.token_id, h.amount, h.created_at, h.team_id FROM billing_holds h" +
		" LEFT JOIN billing_nodes n ON n.node_id = h.owner" +
		" WHERE h.owner <> '' AND h.owner <> ? AND (n.node_id IS NULL OR n.lease_until < ?)" +
		" ORDER BY h.created_at, h.hold_key LIMIT ?"
	return r.query(ctx, q, except, now.UnixMilli(), limit)
}

// List lists every open hold.
func (r holdRepo) List(ctx context.Context) ([]store.Hold, error) {
	return r.query(ctx, "SELECT "+holdColumns+" FROM billing_holds ORDER BY created_at, hold_key")
}

// Forget deletes lapsed leases whose holds are all gone.
func (r holdRepo) Forget(ctx context.Context, now time.Time) error {
	_, err := r.s.db.ExecContext(ctx, r.s.Rebind("DELETE FROM billing_nodes WHERE lease_until < ?"+
		" AND NOT EXISTS (SELECT 1 FROM billing_holds h WHERE h.owner = billing_nodes.node_id)"), now.UnixMilli())
	return wrap(err, "forget leases")
}

func (r holdRepo) query(ctx context.Context, q string, args ...any) ([]store.Hold, error) {
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(q), args...)
	if err != nil {
		return nil, wrap(err, "list holds")
	}
	out, err := collect(rows, func(row interface{ Scan(...any) error }) (store.Hold, error) {
		var h store.Hold
		var created int64
		err := row.Scan(&h.Key, &h.Owner, &h.UserID, &h.TokenID, &h.Amount, &created, &h.TeamID)
		h.CreatedAt = time.UnixMilli(created).UTC()
		return h, err
	})
	return out, wrap(err, "list holds")
}

// openHolds inserts the holds of items whose reserve entry was new.
func openHolds(ctx context.Context, tx *sql.Tx, s *Store, holds []*store.Hold) error {
	for _, h := range holds {
		created := h.CreatedAt
		if created.IsZero() {
			created = time.Now()
		}
		if _, err := tx.ExecContext(ctx, s.Rebind("INSERT INTO billing_holds ("+holdColumns+") VALUES (?, ?, ?, ?, ?, ?, ?)"),
			h.Key, h.Owner, h.UserID, h.TokenID, h.Amount, created.UnixMilli(), h.TeamID); err != nil {
			return err
		}
	}
	return nil
}

// keepHold hands an open hold to a durable record; it reports whether the
// hold was open.
func keepHold(ctx context.Context, tx *sql.Tx, s *Store, key string) (bool, error) {
	var owner string
	err := tx.QueryRowContext(ctx, s.Rebind("SELECT owner FROM billing_holds WHERE hold_key = ?"+s.forUpdate()), key).Scan(&owner)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = tx.ExecContext(ctx, s.Rebind("UPDATE billing_holds SET owner = '' WHERE hold_key = ?"), key)
	return err == nil, err
}

// closeHolds deletes the open holds among keys (sorted, so concurrent
// closers lock rows in the same order) and reports which were open.
func closeHolds(ctx context.Context, tx *sql.Tx, s *Store, keys []string) (map[string]bool, error) {
	open := make(map[string]bool, len(keys))
	const chunk = 64
	for lo := 0; lo < len(keys); lo += chunk {
		part := keys[lo:min(lo+chunk, len(keys))]
		args := make([]any, len(part))
		for i, k := range part {
			args[i] = k
		}
		in := "(?" + strings.Repeat(", ?", len(part)-1) + ")"
		if err := s.closeChunk(ctx, tx, in, args, open); err != nil {
			return nil, err
		}
	}
	return open, nil
}

func (s *Store) closeChunk(ctx context.Context, tx *sql.Tx, in string, args []any, open map[string]bool) error {
	query := "DELETE FROM billing_holds WHERE hold_key IN " + in + " RETURNING hold_key"
	if s.dialect == MySQL {
		// MySQL has no RETURNING: lock the rows, then delete them.
		query = "SELECT hold_key FROM billing_holds WHERE hold_key IN " + in + " FOR UPDATE"
	}
	rows, err := tx.QueryContext(ctx, s.Rebind(query), args...)
	if err != nil {
		return err
	}
	var found []any
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return err
		}
		open[k] = true
		found = append(found, k)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil || s.dialect != MySQL || len(found) == 0 {
		return err
	}
	_, err = tx.ExecContext(ctx, "DELETE FROM billing_holds WHERE hold_key IN (?"+strings.Repeat(", ?", len(found)-1)+")", found...)
	return err
}

// forUpdate locks a selected row where the dialect can; SQLite's single
// writer needs no lock.
func (s *Store) forUpdate() string {
	if s.dialect == SQLite {
		return ""
	}
	return " FOR UPDATE"
}

// DBNow reads the database server's clock (billing.DBClock): lease times
// come from it, so nodes whose clocks disagree agree on whose lease lapsed.
func (s *Store) DBNow(ctx context.Context) (time.Time, error) {
	var q string
	switch s.dialect {
	case Postgres:
		q = "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"
	case MySQL:
		q = "SELECT CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)"
	default:
		q = "SELECT CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
	}
	var ms int64
	if err := s.db.QueryRowContext(ctx, q).Scan(&ms); err != nil {
		return time.Time{}, wrap(err, "read the database clock")
	}
	return time.UnixMilli(ms), nil
}

// LeaseLapsed reports whether node's lease ended before now or is missing
// (billing.LeaseChecker).
func (s *Store) LeaseLapsed(ctx context.Context, node string, now time.Time) (bool, error) {
	var until int64
	err := s.db.QueryRowContext(ctx, s.Rebind("SELECT lease_until FROM billing_nodes WHERE node_id = ?"), node).Scan(&until)
	if errors.Is(err, sql.ErrNoRows) {
		return true, nil
	}
	if err != nil {
		return false, wrap(err, "read lease")
	}
	return until < now.UnixMilli(), nil
}

// LiveNodes lists the nodes whose lease has not ended at now and that
// said they keep balances in Redis (billing.LiveLeases): the nodes that
// must acknowledge a new epoch. A node of a release before the epochs
// (schema 131) never says, and never acknowledges either: waiting for it
// kept every newer node answering 503 "rebuilding live balances" for as
// long as it ran beside them.
func (s *Store) LiveNodes(ctx context.Context, now time.Time) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, s.Rebind("SELECT node_id FROM billing_nodes WHERE lease_until >= ? AND redis = 1"), now.UnixMilli())
	if err != nil {
		return nil, wrap(err, "list live nodes")
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, wrap(err, "list live nodes")
		}
		out = append(out, n)
	}
	return out, wrap(rows.Err(), "list live nodes")
}

// EntryKinds returns the kind of each ledger entry among keys that exists
// (billing.LedgerKinds).
func (s *Store) EntryKinds(ctx context.Context, keys []string) (map[string]string, error) {
	out := make(map[string]string, len(keys))
	for len(keys) > 0 {
		n := min(len(keys), 500)
		args := make([]any, n)
		for i, k := range keys[:n] {
			args[i] = k
		}
		rows, err := s.db.QueryContext(ctx, s.Rebind("SELECT idem_key, kind FROM quota_ledger WHERE idem_key IN (?"+
			strings.Repeat(", ?", n-1)+")"), args...)
		if err != nil {
			return nil, wrap(err, "look up ledger entries")
		}
		for rows.Next() {
			var k, kind string
			if err := rows.Scan(&k, &kind); err != nil {
				rows.Close()
				return nil, wrap(err, "look up ledger entries")
			}
			out[k] = kind
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, wrap(err, "look up ledger entries")
		}
		keys = keys[n:]
	}
	return out, nil
}
