// Package sqlitetest gives a test a SQLite database of its own that is
// already migrated: a copy of one database that the test process migrated
// once. Migrating a new SQLite file runs every migration's DDL through the
// pure-Go SQLite, which under the race detector took 3.4 s per database on
// a loaded 2-core machine, against 0.16 s to copy and open a migrated one
// (docs/PERFORMANCE.md, "CI time", Round 4): most of the race pass of the
// suites that open a store per test. A copy is a separate file, so tests
// stay as independent as with a new file each.
//
// A copy differs from a new file in one thing a caller can see: opening it
// applies no migration (sqlstore.Store.Applied is empty), so it looks like
// a database an earlier start created. Tests of what a first start does
// (the app's seed, the migration tests) keep opening new files.
package sqlitetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

var template struct {
	once sync.Once
	data []byte
	err  error
}

// Path writes a migrated database to a new file in t's temporary
// directory and returns the file's path.
func Path(t testing.TB) string {
	t.Helper()
	template.once.Do(func() { template.data, template.err = migrated() })
	if template.err != nil {
		t.Fatalf("sqlitetest: %v", template.err)
	}
	p := filepath.Join(t.TempDir(), "sqlite.db")
	if err := os.WriteFile(p, template.data, 0o600); err != nil {
		t.Fatalf("sqlitetest: %v", err)
	}
	return p
}

// DSN is Path as the address sqlstore.Open takes.
func DSN(t testing.TB) string {
	t.Helper()
	return "sqlite:" + Path(t)
}

// migrated migrates a new database and returns the file's bytes.
func migrated() ([]byte, error) {
	dir, err := os.MkdirTemp("", "turnpike-sqlitetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "template.db")
	st, err := sqlstore.OpenStore(context.Background(), "sqlite:"+p)
	if err != nil {
		return nil, err
	}
	if err := st.Close(); err != nil {
		return nil, err
	}
	// Closing the last connection checkpoints the write-ahead log into the
	// file and removes it; a log left behind would hold schema the copy
	// lacks.
	if fi, err := os.Stat(p + "-wal"); err == nil && fi.Size() > 0 {
		return nil, fmt.Errorf("the migrated database left a %d-byte write-ahead log", fi.Size())
	}
	return os.ReadFile(p)
}
