package sqlstore

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// testExtraVersion is a registered migration every Open in this package's
// tests applies, standing in for the plugin and task packages.
const testExtraVersion = 900

func init() {
	Register(Migration{
		Version: testExtraVersion,
		Name:    "sqlstore test extension",
		SQL:     "CREATE TABLE sqlstore_test_extra (id {{id}}, label {{string}} NOT NULL, at {{time}} NOT NULL) {{options}}",
	})
}

func TestRegisterRejectsReservedAndDuplicateVersions(t *testing.T) {
	cases := []struct {
		name string
		m    Migration
	}{
		{"version below 100 is reserved for the store", Migration{Version: 99, Name: "low", SQL: "SELECT 1"}},
		{"version already taken", Migration{Version: testExtraVersion, Name: "dup", SQL: "SELECT 1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("Register did not panic")
				}
			}()
			Register(tc.m)
		})
	}
}

func TestRegisteredMigrationIsUsableThroughDBAndRebind(t *testing.T) {
	s := openConcrete(t, "sqlite:"+filepath.Join(t.TempDir(), "x.db"))
	ctx := context.Background()
	at := now()
	if _, err := s.DB().ExecContext(ctx, s.Rebind("INSERT INTO sqlstore_test_extra (label, at) VALUES (?, ?)"), "hello", at); err != nil {
		t.Fatalf("insert into registered table: %v", err)
	}
	var label string
	var got = at
	if err := s.DB().QueryRowContext(ctx, s.Rebind("SELECT label, at FROM sqlstore_test_extra WHERE label = ?"), "hello").Scan(&label, &got); err != nil {
		t.Fatalf("select: %v", err)
	}
	if label != "hello" || !got.Equal(at) {
		t.Errorf("read back %q %v, want hello %v", label, got, at)
	}
	var versions int
	if err := s.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM schema_migrations").Scan(&versions); err != nil {
		t.Fatal(err)
	}
	if want := len(migrations()); versions != want {
		t.Errorf("schema_migrations has %d rows, want %d", versions, want)
	}
}

func TestReopenAndConcurrentOpenMigrateOnce(t *testing.T) {
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "shared.db")
	first := openConcrete(t, dsn)
	u := &store.User{Username: "kept", Role: store.RoleUser, Group: "default"}
	if err := first.Users().Create(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(context.Background(), dsn)
			if err != nil {
				t.Errorf("reopen: %v", err)
				return
			}
			defer s.Close()
			if _, err := s.Users().GetByUsername(context.Background(), "kept"); err != nil {
				t.Errorf("data lost on reopen: %v", err)
			}
		}()
	}
	wg.Wait()
}

func TestInMemorySQLiteKeepsDataAcrossCalls(t *testing.T) {
	for _, dsn := range []string{"sqlite::memory:", "sqlite:file::memory:?cache=shared"} {
		t.Run(dsn, func(t *testing.T) {
			s := openConcrete(t, dsn)
			ctx := context.Background()
			if err := s.Groups().Upsert(ctx, store.Group{Name: "g", Ratio: 1.5}); err != nil {
				t.Fatal(err)
			}
			groups, err := s.Groups().List(ctx)
			if err != nil || len(groups) != 1 {
				t.Fatalf("List = %v, %v", groups, err)
			}
			if err := s.Groups().Delete(ctx, "g"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestOpenRejectsUnknownAddressWithoutConnecting(t *testing.T) {
	if _, err := Open(context.Background(), "oracle://x"); err == nil {
		t.Fatal("Open accepted an unknown scheme")
	}
}

func openConcrete(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := OpenStore(context.Background(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
