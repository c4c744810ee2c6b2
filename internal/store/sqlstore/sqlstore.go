// Package sqlstore implements store.Store on SQLite, PostgreSQL and
// MySQL/MariaDB with one set of queries and versioned migrations that other
// packages can extend with Register.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	// Drivers, registered as "pgx", "mysql" and "sqlite".
	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Store is the SQL implementation of store.Store.
type Store struct {
	db      *sql.DB
	dialect Dialect

	prepMu sync.Mutex                 // serialises the first preparation of stmts
	stmts  atomic.Pointer[batchStmts] // nil until the first billing write
	polls  polledStmts                // the change-following loops' queries

	applied []Migration // what opening the store applied
}

var _ store.Store = (*Store)(nil)

// Open connects to the database named by dsn (sqlite:PATH, postgres://…,
// postgresql://… or mysql://user:pass@tcp(host:port)/db), creates the SQLite
// file's directory if needed, and applies every pending migration.
func Open(ctx context.Context, dsn string) (store.Store, error) {
	return OpenStore(ctx, dsn)
}

// OpenStore is Open returning the concrete type, for callers that need DB,
// Rebind or the dialect-aware helpers.
func OpenStore(ctx context.Context, dsn string) (*Store, error) {
	t, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if t.dir != "" {
		if err := os.MkdirAll(t.dir, 0o750); err != nil {
			return nil, fmt.Errorf("sqlstore: create database directory: %w", err)
		}
	}
	db, err := openDB(t)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: open %s: %w", t.dialect, err)
	}
	configurePool(db, t)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlstore: connect to %s: %w", t.dialect, err)
	}
	applied, err := migrate(ctx, db, t.dialect)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &Store{db: db, dialect: t.dialect, applied: applied}, nil
}

func openDB(t target) (*sql.DB, error) {
	if t.dialect == SQLite {
		return openSQLiteDB(t.source)
	}
	return sql.Open(t.driver, t.source)
}

// configurePool sizes the connection pool.
//
// SQLite: one pool of up to 8 connections. WAL lets all of them read at once
// while a single writer commits; writers take the lock at BEGIN (immediate
// transactions) and queue on busy_timeout. A separate single write
// connection would queue writers in Go instead, but it would also make DB()
// ambiguous for other packages, and with transactions that last
// milliseconds the busy wait costs little. An in-memory database exists
// once per connection, so it gets exactly one connection that never expires.
//
// PostgreSQL and MySQL: a moderate pool; the server does the queueing.
func configurePool(db *sql.DB, t target) {
	switch {
	case t.dialect == SQLite && t.memory:
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
	case t.dialect == SQLite:
		db.SetMaxOpenConns(8)
		db.SetMaxIdleConns(8)
		db.SetConnMaxIdleTime(5 * time.Minute)
	default:
		db.SetMaxOpenConns(32)
		db.SetMaxIdleConns(16)
		db.SetConnMaxLifetime(30 * time.Minute)
		db.SetConnMaxIdleTime(5 * time.Minute)
	}
}

// DB returns the underlying pool so other packages can keep their own
// tables (registered with Register) in the same database.
func (s *Store) DB() *sql.DB { return s.db }

// SQLDialect returns the dialect as a typed value.
func (s *Store) SQLDialect() Dialect { return s.dialect }

// Rebind rewrites '?' placeholders for the store's dialect.
func (s *Store) Rebind(query string) string { return Rebind(s.dialect, query) }

// Dialect reports "sqlite", "postgres" or "mysql".
func (s *Store) Dialect() string { return string(s.dialect) }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Close closes the prepared statements and the pool.
func (s *Store) Close() error {
	var errs []error
	if b := s.stmts.Swap(nil); b != nil {
		errs = append(errs, b.close())
	}
	errs = append(errs, s.polls.close())
	return errors.Join(append(errs, s.db.Close())...)
}

// Users returns the user repository.
func (s *Store) Users() store.UserRepo { return userRepo{s} }

// Groups returns the pricing-group repository.
func (s *Store) Groups() store.GroupRepo { return groupRepo{s} }

// Tokens returns the API key repository.
func (s *Store) Tokens() store.TokenRepo { return tokenRepo{s} }

// Channels returns the channel repository.
func (s *Store) Channels() store.ChannelRepo { return channelRepo{s} }

// Prices returns the model price repository.
func (s *Store) Prices() store.PriceRepo { return priceRepo{s} }

// Logs returns the usage log repository.
func (s *Store) Logs() store.LogRepo { return logRepo{s} }

// Ledger returns the quota ledger.
func (s *Store) Ledger() store.LedgerRepo { return ledgerRepo{s} }

// Sessions returns the console session repository.
func (s *Store) Sessions() store.SessionRepo { return sessionRepo{s} }
