package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// SchemaStatus is what a database holds against what this binary knows.
type SchemaStatus struct {
	// Exists is false for a SQLite file not created yet (the first start
	// creates it); every migration is then pending.
	Exists  bool
	Version int // highest applied migration, 0 for none
	Known   int // KnownSchemaVersion
	Pending []Migration
}

// Ahead reports a database migrated past what this binary knows.
func (s SchemaStatus) Ahead() bool { return s.Version > s.Known }

// Check connects to the database dsn names and reads its schema version
// without writing anything: it creates no SQLite file or directory and
// applies no migration, so an operator can test an address while nodes
// run (config check).
func Check(ctx context.Context, dsn string) (SchemaStatus, error) {
	st := SchemaStatus{Known: KnownSchemaVersion()}
	db, err := openReadOnly(ctx, dsn)
	if err != nil || db == nil {
		st.Pending = migrations()
		return st, err
	}
	defer db.Close()
	st.Exists = true
	applied, err := appliedVersions(ctx, db)
	if err != nil {
		return st, err
	}
	for v := range applied {
		st.Version = max(st.Version, v)
	}
	for _, m := range migrations() {
		if !applied[m.Version] {
			st.Pending = append(st.Pending, m)
		}
	}
	return st, nil
}

// openReadOnly connects without writing anything; a SQLite file that does
// not exist yet gives no database and no error.
func openReadOnly(ctx context.Context, dsn string) (*sql.DB, error) {
	t, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if t.dialect == SQLite && !t.memory {
		if _, err := os.Stat(t.file); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		// Read-only, and without the pool's connector (which adds a table
		// per connection): a check must never change the file.
		t.source = "file:" + t.file + "?mode=ro&_pragma=busy_timeout(5000)"
	}
	db, err := sql.Open(t.driver, t.source)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: open %s: %w", t.dialect, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlstore: connect to %s: %w", t.dialect, err)
	}
	return db, nil
}

// UsernamesExisting answers which of names the database holds as users,
// read-only (config check); a database not created yet holds none.
func UsernamesExisting(ctx context.Context, dsn string, names []string) (map[string]bool, error) {
	out := map[string]bool{}
	db, err := openReadOnly(ctx, dsn)
	if err != nil || db == nil || len(names) == 0 {
		return out, err
	}
	defer db.Close()
	t, _ := parseDSN(dsn)
	for _, n := range names {
		var c int
		if err := db.QueryRowContext(ctx, Rebind(t.dialect, "SELECT COUNT(*) FROM users WHERE username = ?"), n).Scan(&c); err != nil {
			return out, nil // no users table yet: a database never started holds none
		}
		out[n] = c > 0
	}
	return out, nil
}

// appliedVersions reads schema_migrations; a database without the table
// (new and empty) has applied none.
func appliedVersions(ctx context.Context, db *sql.DB) (map[int]bool, error) {
	out := map[int]bool{}
	rows, err := db.QueryContext(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		// Only a missing table means "none"; a database that answers
		// nothing else is reported by the ping above.
		return out, nil
	}
	defer rows.Close()
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("sqlstore: read schema version: %w", err)
		}
		out[v] = true
	}
	return out, rows.Err()
}

// Applied lists the migrations opening this store applied, oldest first.
func (s *Store) Applied() []Migration { return append([]Migration(nil), s.applied...) }

// SchemaVersion is the highest migration the database has applied.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&v)
	return v, wrap(err, "schema version")
}
