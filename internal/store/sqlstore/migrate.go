package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// Migration is one versioned schema change. Every migration of the
// gateway's database is listed in allMigrations (migrations.go).
type Migration struct {
	Version int
	Name    string
	// SQL is a template expanded per dialect with Expand; it may hold
	// several statements separated by semicolons.
	SQL string
	// PerDialect, when it has an entry for the store's dialect, is used
	// verbatim instead of SQL.
	PerDialect map[Dialect]string
	// Online are statements run one at a time outside any transaction,
	// before the script's transaction, on the dialects named (runOnline):
	// an index build that must not block writes to a large table
	// (PostgreSQL's CREATE INDEX CONCURRENTLY refuses a transaction).
	// They must be safe to run again, since a crash before the version is
	// recorded runs them again on the next start.
	Online map[Dialect][]string
}

// script returns the statements to run on d.
func (m Migration) script(d Dialect) string {
	if s, ok := m.PerDialect[d]; ok {
		return s
	}
	return Expand(d, m.SQL)
}

// migrations returns every migration in version order.
func migrations() []Migration {
	all := append([]Migration(nil), allMigrations...)
	sort.Slice(all, func(i, j int) bool { return all[i].Version < all[j].Version })
	return all
}

// KnownSchemaVersion is the newest schema this binary knows: the highest
// migration version it carries.
func KnownSchemaVersion() int {
	all := migrations()
	return all[len(all)-1].Version
}

// SchemaAheadError refuses a database that a newer release has migrated
// past what this binary knows: it would read and write tables and columns
// without knowing what the newer release keeps in them.
type SchemaAheadError struct{ Database, Known int }

func (e *SchemaAheadError) Error() string {
	return fmt.Sprintf("sqlstore: the database is at schema version %d, newer than this binary knows (%d); "+
		"run the release that migrated it (or a newer one), or restore a backup taken before that upgrade", e.Database, e.Known)
}

// migrate brings the schema up to date. All work happens on one connection
// holding a database-wide lock on PostgreSQL and MySQL, so gateways started
// together do not race; each migration and its schema_migrations row are
// written in one transaction (MySQL commits DDL implicitly, so there a
// failed migration can leave partial work behind).
// It returns the migrations it applied (none when the schema was up to
// date). A database already past what this binary knows is refused before
// anything is written (SchemaAheadError).
func migrate(ctx context.Context, db *sql.DB, d Dialect) ([]Migration, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: migrate: %w", err)
	}
	defer conn.Close()
	unlock, err := lockMigrations(ctx, conn, d)
	if err != nil {
		return nil, err
	}
	defer func() { unlock() }() // the lock runOnline took again, if it did
	if _, err := conn.ExecContext(ctx, Expand(d,
		"CREATE TABLE IF NOT EXISTS schema_migrations (version {{bigint}} NOT NULL PRIMARY KEY, name {{string}} NOT NULL, applied_at {{time}} NOT NULL) {{options}}")); err != nil {
		return nil, fmt.Errorf("sqlstore: create schema_migrations: %w", err)
	}
	var top int
	if err := conn.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&top); err != nil {
		return nil, fmt.Errorf("sqlstore: read schema version: %w", err)
	}
	if known := KnownSchemaVersion(); top > known {
		return nil, &SchemaAheadError{Database: top, Known: known}
	}
	var applied []Migration
	for _, m := range migrations() {
		releaseOnline := func() {}
		if len(m.Online[d]) > 0 {
			if unlock, releaseOnline, err = runOnline(ctx, conn, d, m, unlock); err != nil {
				return applied, fmt.Errorf("sqlstore: migration %d %s: %w", m.Version, m.Name, err)
			}
		}
		done, err := applyMigration(ctx, conn, d, m)
		releaseOnline()
		if err != nil {
			return applied, fmt.Errorf("sqlstore: migration %d %s: %w", m.Version, m.Name, err)
		}
		if done {
			applied = append(applied, m)
		}
	}
	return applied, nil
}

// applyMigration applies m unless the database has it; it reports whether
// it did.
func applyMigration(ctx context.Context, conn *sql.Conn, d Dialect, m Migration) (bool, error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var n int
	// Checked inside the transaction: on SQLite it holds the write lock, so
	// a second process opening the same file sees the first one's work.
	if err := tx.QueryRowContext(ctx, Rebind(d, "SELECT COUNT(*) FROM schema_migrations WHERE version = ?"), m.Version).Scan(&n); err != nil {
		return false, err
	}
	if n > 0 {
		return false, nil
	}
	if script := m.script(d); strings.TrimSpace(script) != "" {
		if _, err := tx.ExecContext(ctx, script); err != nil {
			return false, err
		}
	}
	if _, err := tx.ExecContext(ctx, Rebind(d, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"),
		m.Version, m.Name, now()); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// lockMigrations takes an advisory lock where the database offers one.
func lockMigrations(ctx context.Context, conn *sql.Conn, d Dialect) (func(), error) {
	return advisoryLock(ctx, conn, d, 7_307_150_001, "turnpike_migrations") // arbitrary, fixed
}

// advisoryLock takes a database-wide named lock on conn where the database
// offers one (PostgreSQL: key; MySQL: name) and returns its release.
// SQLite has none: its writers are serialised by the file lock.
func advisoryLock(ctx context.Context, conn *sql.Conn, d Dialect, key int64, name string) (func(), error) {
	switch d {
	case Postgres:
		if err := pollAdvisoryLock(ctx, conn, key); err != nil {
			return nil, fmt.Errorf("sqlstore: lock %s: %w", name, err)
		}
		return func() { conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock($1)", key) }, nil
	case MySQL:
		var got sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 60)", name).Scan(&got); err != nil {
			return nil, fmt.Errorf("sqlstore: lock %s: %w", name, err)
		}
		if got.Int64 != 1 {
			return nil, fmt.Errorf("sqlstore: lock %s: timed out waiting for another process", name)
		}
		return func() { conn.ExecContext(context.Background(), "SELECT RELEASE_LOCK(?)", name) }, nil
	}
	return func() {}, nil
}

// SeedLock serialises seeding among nodes that start together: the first
// applies the file and records its marks, the others then find every
// entry applied. It holds one pooled connection until unlock is called.
func (s *Store) SeedLock(ctx context.Context) (unlock func(), err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: seed lock: %w", err)
	}
	release, err := advisoryLock(ctx, conn, s.dialect, 7_307_150_002, "turnpike_seed")
	if err != nil {
		conn.Close()
		return nil, err
	}
	return func() { release(); conn.Close() }, nil
}
