package sqlstore

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/turnpike-gw/turnpike/internal/store"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// errClass sorts driver errors into the few kinds callers act on.
type errClass int

const (
	classOther errClass = iota
	classUnique
	classForeignKey
	classRetry // deadlock, serialization failure or lock timeout: rerun the transaction
)

func classify(err error) errClass {
	if errors.Is(err, errLedgerRace) {
		return classRetry
	}
	var sqliteErr *sqlite.Error
	if errors.As(err, &sqliteErr) {
		switch code := sqliteErr.Code(); {
		case code == sqlite3.SQLITE_CONSTRAINT_UNIQUE, code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return classUnique
		case code == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return classForeignKey
		case code&0xff == sqlite3.SQLITE_BUSY, code&0xff == sqlite3.SQLITE_LOCKED:
			return classRetry
		}
		return classOther
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505":
			return classUnique
		case "23503":
			return classForeignKey
		case "40P01", "40001":
			return classRetry
		}
		return classOther
	}
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) {
		switch myErr.Number {
		case 1062:
			return classUnique
		case 1451, 1452:
			return classForeignKey
		case 1213, 1205:
			return classRetry
		}
	}
	return classOther
}

// wrap turns driver errors into the store's sentinel errors, keeping the
// driver error in the chain for diagnosis. what names the entity, e.g.
// "user".
func wrap(err error, what string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
		return err // already classified further down
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	switch classify(err) {
	case classUnique:
		return fmt.Errorf("%s: %w: %w", what, store.ErrConflict, err)
	case classForeignKey:
		return fmt.Errorf("%s: referenced record %w: %w", what, store.ErrNotFound, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// notFound is the error for an update or delete that matched no row.
func notFound(what string) error {
	return fmt.Errorf("%s: %w", what, store.ErrNotFound)
}
