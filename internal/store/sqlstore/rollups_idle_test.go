package sqlstore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// A node's backfill keeps running every few seconds once everything is
// folded; it must find that out without a write transaction, or it
// queues behind (and holds up) the billing writer for nothing.
func TestAFinishedBackfillTakesNoWriteLock(t *testing.T) {
	file := filepath.Join(t.TempDir(), "idle.db")
	st, err := OpenStore(context.Background(), "sqlite:"+file)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for more := true; more; {
		if more, err = st.Rollups().Backfill(context.Background(), 100); err != nil {
			t.Fatal(err)
		}
	}
	writer, err := sql.Open("sqlite", "file:"+file+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	tx, err := writer.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec("UPDATE usage_rollup_backfill SET next_id = next_id WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	more, err := st.Rollups().Backfill(ctx, 100)
	if err != nil || more {
		t.Fatalf("a finished backfill beside another writer: more %v, err %v; want false, nil at once", more, err)
	}
}
