// Package testdb gives a test a database of its own on a shared server — a
// schema on PostgreSQL, a database on MySQL — so tests running at once (and
// earlier runs) never see each other's rows, and opens a raw connection for
// the few tests that must change rows behind the gateway's back (a lock
// held by another process, a row deleted to break the books). It lives
// under store because only the store speaks SQL (internal/archtest).
package testdb

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	_ "modernc.org/sqlite"             // the "sqlite" driver
)

// Postgres creates a schema on the server base names, drops it when t ends,
// and returns base with the schema as its search_path.
func Postgres(t testing.TB, base string) string {
	t.Helper()
	db := Open(t, "pgx", base)
	schema := "turnpike_test_" + suffix()
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP SCHEMA " + schema + " CASCADE") })
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}

// MySQL creates a database on the server base ("mysql://…") names, drops
// it when t ends, and returns the address of the new database in the same
// form.
func MySQL(t testing.TB, base string) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(strings.TrimPrefix(base, "mysql://"))
	if err != nil {
		t.Fatal(err)
	}
	db := Open(t, "mysql", cfg.FormatDSN())
	name := "turnpike_test_" + suffix()
	if _, err := db.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4"); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP DATABASE " + name) })
	c := cfg.Clone()
	c.DBName = name
	return "mysql://" + c.FormatDSN()
}

// Open opens a raw connection pool with driver ("pgx", "mysql" or
// "sqlite") and closes it when t ends.
func Open(t testing.TB, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func suffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
