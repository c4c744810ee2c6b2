package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/testdb"
)

// emptiedStores returns an opener of stores on the one database dsn names,
// for a suite whose every subtest needs an empty store of its own. The
// first store migrates the database; each later one opens it (the
// migrations are found applied) and empties it: every table's rows
// deleted, every identity counter restarted and the rows the migrations
// themselves wrote put back, so the subtest sees exactly what a freshly
// migrated database holds.
//
// Why: migrating a new schema took 1–2 s on PostgreSQL and 2–10 s on
// MariaDB on the CI machine, for each of the conformance suite's 120-odd
// subtests; emptying takes a few tens of milliseconds. Migrating a fresh
// database is still tested (migrate_test.go, freshStores and every other
// test that opens a new one).
func emptiedStores(dsn string) func(t *testing.T) store.Store {
	var seeds []seedTable
	migrated := false
	return func(t *testing.T) store.Store {
		s := openTest(t, dsn).(*Store)
		if !migrated {
			seeds = readSeeds(t, s)
			migrated = true
			return s
		}
		emptyDatabase(t, s, seeds)
		return s
	}
}

// seedTable is a table's rows as the migrations left them.
type seedTable struct {
	name string
	cols []string
	rows [][]any
}

// userTables lists the database's tables other than schema_migrations.
func userTables(ctx context.Context, t *testing.T, s *Store) []string {
	t.Helper()
	q := "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
	if s.dialect == MySQL {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'"
	}
	var names []string
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		t.Fatalf("list tables: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != "schema_migrations" {
			names = append(names, n)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

func quoteIdent(d Dialect, name string) string {
	if d == MySQL {
		return "`" + name + "`"
	}
	return `"` + name + `"`
}

// readSeeds keeps every row of a freshly migrated database.
func readSeeds(t *testing.T, s *Store) []seedTable {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var seeds []seedTable
	for _, name := range userTables(ctx, t, s) {
		rows, err := s.db.QueryContext(ctx, "SELECT * FROM "+quoteIdent(s.dialect, name))
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		seed := seedTable{name: name}
		seed.cols, err = rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			vals := make([]any, len(seed.cols))
			ptrs := make([]any, len(vals))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("read %s: %v", name, err)
			}
			seed.rows = append(seed.rows, vals)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if len(seed.rows) > 0 {
			seeds = append(seeds, seed)
		}
	}
	return seeds
}

// emptyDatabase brings s's database back to what readSeeds saw. The
// foreign keys cascade on delete, so the order of the deletes is free.
func emptyDatabase(t *testing.T, s *Store, seeds []seedTable) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var script strings.Builder
	for _, name := range userTables(ctx, t, s) {
		fmt.Fprintf(&script, "DELETE FROM %s;\n", quoteIdent(s.dialect, name))
	}
	for _, restart := range identityRestarts(ctx, t, s) {
		script.WriteString(restart + ";\n")
	}
	if _, err := s.db.ExecContext(ctx, script.String()); err != nil {
		t.Fatalf("empty the database: %v", err)
	}
	for _, seed := range seeds {
		cols := make([]string, len(seed.cols))
		for i, c := range seed.cols {
			cols[i] = quoteIdent(s.dialect, c)
		}
		q := s.Rebind(fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", quoteIdent(s.dialect, seed.name),
			strings.Join(cols, ", "), strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")))
		for _, row := range seed.rows {
			if _, err := s.db.ExecContext(ctx, q, row...); err != nil {
				t.Fatalf("put back the migrations' rows of %s: %v", seed.name, err)
			}
		}
	}
}

// identityRestarts returns the statements that restart every identity
// counter a test has moved (one never used needs none).
func identityRestarts(ctx context.Context, t *testing.T, s *Store) []string {
	t.Helper()
	q := "SELECT sequencename FROM pg_sequences WHERE schemaname = current_schema() AND last_value IS NOT NULL"
	stmt := "ALTER SEQUENCE %s RESTART"
	if s.dialect == MySQL {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND auto_increment > 1"
		stmt = "ALTER TABLE %s AUTO_INCREMENT = 1"
	}
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		t.Fatalf("list identity counters: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf(stmt, quoteIdent(s.dialect, n)))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAnEmptiedStoreIsAFreshlyMigratedOne checks emptiedStores itself: after
// a subtest wrote rows, the next store holds none of them, hands out the
// same first identity again and keeps every row the migrations wrote.
func TestAnEmptiedStoreIsAFreshlyMigratedOne(t *testing.T) {
	skipDialectSuiteWhenShort(t)
	for dialect, dsn := range serverDatabases(t) {
		t.Run(dialect, func(t *testing.T) {
			open := emptiedStores(dsn)
			var firstID int64
			var seeds []seedTable
			for round := range 2 {
				t.Run(fmt.Sprintf("round %d", round), func(t *testing.T) {
					s := open(t).(*Store)
					if round == 1 {
						if _, err := s.Users().GetByUsername(context.Background(), "earlier"); !errors.Is(err, store.ErrNotFound) {
							t.Fatalf("the earlier subtest's user: %v, want not found", err)
						}
						if got := readSeeds(t, s); fmt.Sprint(got) != fmt.Sprint(seeds) {
							t.Fatalf("rows after emptying %v, want the migrations' %v", got, seeds)
						}
					} else {
						seeds = readSeeds(t, s)
					}
					u := &store.User{Username: "earlier", PasswordHash: "h", Role: store.RoleUser, Group: "default", Status: store.StatusEnabled}
					if err := s.Users().Create(context.Background(), u); err != nil {
						t.Fatal(err)
					}
					if round == 0 {
						firstID = u.ID
					} else if u.ID != firstID {
						t.Fatalf("first user id after emptying %d, want %d as on the fresh database", u.ID, firstID)
					}
				})
			}
		})
	}
}

// serverDatabases makes, for each server the environment names, a database
// of its own for t and returns its address by dialect.
func serverDatabases(t *testing.T) map[string]string {
	out := map[string]string{}
	if base := os.Getenv("TURNPIKE_TEST_POSTGRES"); base != "" {
		out["postgres"] = testdb.Postgres(t, base)
	}
	if base := os.Getenv("TURNPIKE_TEST_MYSQL"); base != "" {
		out["mysql"] = testdb.MySQL(t, base)
	}
	if len(out) == 0 {
		t.Skip("set TURNPIKE_TEST_POSTGRES or TURNPIKE_TEST_MYSQL")
	}
	return out
}
