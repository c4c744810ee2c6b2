package sqlstore

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestMigrationVersionsAreUniqueAndRecorded(t *testing.T) {
	seen := map[int]string{}
	for _, m := range migrations() {
		if prev, ok := seen[m.Version]; ok {
			t.Fatalf("migration version %d used twice (%q, %q)", m.Version, prev, m.Name)
		}
		seen[m.Version] = m.Name
	}
	// The versions of the tables other packages used to register keep
	// their numbers, so databases made before the move carry on.
	for v, name := range map[int]string{100: "task plugins", 110: "tasks", 120: "response index"} {
		if seen[v] != name {
			t.Errorf("migration %d is %q, want %q", v, seen[v], name)
		}
	}
	s := openConcrete(t, "sqlite:"+filepath.Join(t.TempDir(), "x.db"))
	var versions int
	if err := s.DB().QueryRowContext(context.Background(), "SELECT COUNT(*) FROM schema_migrations").Scan(&versions); err != nil {
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

// A database a newer release migrated is refused before anything is
// written, naming both schema versions and what to do.
func TestOpenRefusesADatabaseMigratedPastWhatThisBinaryKnows(t *testing.T) {
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "ahead.db")
	s := openConcrete(t, dsn)
	ahead := KnownSchemaVersion() + 7
	if _, err := s.DB().Exec(s.Rebind("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from the future', ?)"), ahead, now()); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), dsn)
	var ae *SchemaAheadError
	if !errors.As(err, &ae) || ae.Database != ahead || ae.Known != KnownSchemaVersion() {
		t.Fatalf("err = %v, want SchemaAheadError{%d, %d}", err, ahead, KnownSchemaVersion())
	}
	for _, want := range []string{strconv.Itoa(ahead), strconv.Itoa(KnownSchemaVersion()), "run the release that migrated it"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	st, err := Check(context.Background(), dsn)
	if err != nil || !st.Ahead() {
		t.Fatalf("Check = %+v, %v; want ahead", st, err)
	}
}
