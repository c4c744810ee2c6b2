package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/storetest"
)

// The SQLite conformance suite runs on migrated copies, in
// conformance_sqlite_test.go; opening a new file, directories and all, is
// checked here once.
func TestOpenMigratesANewSQLiteFileInDirectoriesItCreates(t *testing.T) {
	s := openTest(t, "sqlite:"+filepath.Join(t.TempDir(), "nested", "dir", "test.db")).(*Store)
	v, err := s.SchemaVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v != KnownSchemaVersion() || len(s.Applied()) != len(migrations()) {
		t.Fatalf("schema version %d with %d migrations applied, want %d with all %d", v, len(s.Applied()), KnownSchemaVersion(), len(migrations()))
	}
}

func TestConformancePostgres(t *testing.T) {
	skipDialectSuiteWhenShort(t)
	base := os.Getenv("TURNPIKE_TEST_POSTGRES")
	if base == "" {
		t.Skip("set TURNPIKE_TEST_POSTGRES (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable) to run the PostgreSQL conformance suite")
	}
	admin := adminDB(t, "pgx", base)
	schema := "turnpike_test_" + randomSuffix(t)
	execAdmin(t, admin, "CREATE SCHEMA "+schema)
	t.Cleanup(func() { execAdmin(t, admin, "DROP SCHEMA "+schema+" CASCADE") })
	storetest.Run(t, emptiedStores(withQueryParam(base, "search_path", schema)))
}

func TestConformanceMySQL(t *testing.T) {
	skipDialectSuiteWhenShort(t)
	base := os.Getenv("TURNPIKE_TEST_MYSQL")
	if base == "" {
		t.Skip("set TURNPIKE_TEST_MYSQL (e.g. mysql://root:@tcp(127.0.0.1:3306)/test) to run the MySQL conformance suite")
	}
	cfg, err := mysql.ParseDSN(strings.TrimPrefix(base, "mysql://"))
	if err != nil {
		t.Fatalf("TURNPIKE_TEST_MYSQL is malformed: %v", err)
	}
	admin := adminDB(t, "mysql", cfg.FormatDSN())
	db := "turnpike_test_" + randomSuffix(t)
	execAdmin(t, admin, "CREATE DATABASE "+db+" CHARACTER SET utf8mb4")
	t.Cleanup(func() { execAdmin(t, admin, "DROP DATABASE "+db) })
	c := cfg.Clone()
	c.DBName = db
	storetest.Run(t, emptiedStores("mysql://"+c.FormatDSN()))
}

// skipDialectSuiteWhenShort skips a server dialect's conformance suite
// under -short (CI's race pass): the suite checks that dialect's SQL, which
// the plain run checks; the Go code above the SQL is the SQLite suite's,
// which the race pass keeps.
func skipDialectSuiteWhenShort(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the SQL of this dialect is checked by the run without -short")
	}
}

// openTest opens a store and closes it when the test ends. Every failure is
// fatal: a configured database that cannot be reached must fail CI. A
// fresh MariaDB database runs every migration's DDL (11 s alone at load
// 12); with the package's tests migrating side by side that passed 30 s.
func openTest(t *testing.T, dsn string) store.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// adminDB connects to the test server to create and drop per-test
// schemas.
func adminDB(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", driver, err)
	}
	t.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("%s test database unreachable: %v", driver, err)
	}
	return db
}

func execAdmin(t *testing.T, db *sql.DB, stmt string) {
	t.Helper()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

func randomSuffix(t *testing.T) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func withQueryParam(dsn, key, value string) string {
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + key + "=" + value
}

// freshStores returns, for every database the environment offers, an opener
// of an empty store of its own (a schema or database made for the test).
func freshStores(t *testing.T) map[string]func(t *testing.T) *Store {
	out := map[string]func(t *testing.T) *Store{
		"sqlite": func(t *testing.T) *Store {
			return openTest(t, "sqlite:"+filepath.Join(t.TempDir(), "fresh.db")).(*Store)
		},
	}
	if base := os.Getenv("TURNPIKE_TEST_POSTGRES"); base != "" {
		out["postgres"] = func(t *testing.T) *Store {
			admin := adminDB(t, "pgx", base)
			schema := "turnpike_test_" + randomSuffix(t)
			execAdmin(t, admin, "CREATE SCHEMA "+schema)
			t.Cleanup(func() { execAdmin(t, admin, "DROP SCHEMA "+schema+" CASCADE") })
			return openTest(t, withQueryParam(base, "search_path", schema)).(*Store)
		}
	}
	if base := os.Getenv("TURNPIKE_TEST_MYSQL"); base != "" {
		out["mysql"] = func(t *testing.T) *Store {
			cfg, err := mysql.ParseDSN(strings.TrimPrefix(base, "mysql://"))
			if err != nil {
				t.Fatal(err)
			}
			admin := adminDB(t, "mysql", cfg.FormatDSN())
			db := "turnpike_test_" + randomSuffix(t)
			execAdmin(t, admin, "CREATE DATABASE "+db+" CHARACTER SET utf8mb4")
			t.Cleanup(func() { execAdmin(t, admin, "DROP DATABASE "+db) })
			c := cfg.Clone()
			c.DBName = db
			return openTest(t, "mysql://"+c.FormatDSN()).(*Store)
		}
	}
	return out
}
