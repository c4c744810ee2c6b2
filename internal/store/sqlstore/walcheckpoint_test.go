package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// pagesStore opens a SQLite store on a file with a table of one row a
// page, its WAL emptied, and returns the file's path.
func pagesStore(t *testing.T) (*Store, string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wal.db")
	st, err := OpenStore(ctx, "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.db.ExecContext(ctx, "CREATE TABLE pages (b BLOB NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	return st, path
}

// commitPages commits n rows of a page each in one store transaction:
// 3,500 random bytes fill most of a 4 KiB page and cannot share one.
func commitPages(t *testing.T, st *Store, n int) {
	t.Helper()
	fill := "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) INSERT INTO pages SELECT randomblob(3500) FROM n"
	err := st.withTx(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.ExecContext(context.Background(), fill, n)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestTheCommitLeavesTheWALToTheStoresCheckpoint: until a checkpoint
// copies them, committed pages live only in the WAL and the database file
// keeps its size. SQLite's own checkpoint ran in the commit that took the
// WAL past 1,000 pages (the billing writer's, which paid for it and waited
// on its syncs); now no commit checkpoints below autocheckpointPages, and
// the store's goroutine copies the WAL once it passes checkpointPages.
// On main the first step fails: the file grew in the third commit.
func TestTheCommitLeavesTheWALToTheStoresCheckpoint(t *testing.T) {
	st, path := pagesStore(t)
	before := fileSize(t, path)
	for range 4 {
		commitPages(t, st, 500)
	}
	time.Sleep(50 * time.Millisecond) // a checkpoint started anywhere would be under way
	if grown := fileSize(t, path) - before; grown != 0 {
		t.Fatalf("after 2,000 committed pages the database file grew by %d bytes: something checkpointed below %d pages", grown, checkpointPages)
	}
	for range 5 {
		commitPages(t, st, 500)
	}
	deadline := time.Now().Add(30 * time.Second)
	for fileSize(t, path) < before+4000*4096 {
		if time.Now().After(deadline) {
			t.Fatalf("4,500 committed pages, and 30 s later the database file has grown by %d bytes, not by their 4,000 pages and more", fileSize(t, path)-before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTheBackstopCheckpointIsSetOnEveryConnection: SQLite's checkpoint in
// the commit stays, at autocheckpointPages, for a WAL the store's own
// checkpoints do not keep short (a writer that never pauses).
func TestTheBackstopCheckpointIsSetOnEveryConnection(t *testing.T) {
	st, _ := pagesStore(t)
	var n int64
	if err := st.db.QueryRowContext(context.Background(), "PRAGMA wal_autocheckpoint").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != autocheckpointPages {
		t.Errorf("wal_autocheckpoint = %d, want %d", n, autocheckpointPages)
	}
}

// TestTheWALStartsOverWhileCommitsGoOn is sustained load: commits paced
// as the billing writer's batches come (20 ms apart here, 100 ms in a
// gateway), with and without reads beside them. Checkpoints off the commit
// run while commits go on, and the WAL starts over only after a checkpoint
// that copied all of it; the WAL must stay within a few thresholds however
// many frames are committed.
func TestTheWALStartsOverWhileCommitsGoOn(t *testing.T) {
	cases := []struct {
		name    string
		readers bool
	}{
		{name: "commits alone", readers: false},
		{name: "commits and reads", readers: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, path := pagesStore(t)
			const threshold, commits, perCommit = 100, 150, 10
			st.wal.pages = threshold
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for tc.readers {
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
					}
					var n sql.NullInt64
					if err := st.db.QueryRowContext(context.Background(), "SELECT max(rowid) FROM pages").Scan(&n); err != nil {
						t.Error(err)
						return
					}
				}
			}()
			for range commits {
				commitPages(t, st, perCommit)
				time.Sleep(20 * time.Millisecond)
			}
			close(stop)
			<-done
			st.wal.wait()
			// Six thresholds are a third of the frames committed.
			runs, longest := st.wal.stats()
			t.Logf("%d checkpoints; the longest WAL one found: %d frames", runs, longest)
			if longest > 6*threshold {
				t.Errorf("a checkpoint found %d frames in the WAL, threshold %d, %d committed in all", longest, threshold, commits*perCommit)
			}
			if wal := fileSize(t, path+"-wal"); wal > 6*threshold*4200 {
				t.Errorf("the WAL file holds %d bytes, over six times the threshold's %d frames", wal, threshold)
			}
		})
	}
}

// TestBatchesCommittedBeforeACheckpointSurviveACrash: a batch is durable
// once committed to the WAL, checkpointed or not. The database file and
// its WAL are copied while the store is open, as a crash leaves them,
// after some batches were checkpointed and others were not; the copy,
// opened, holds every batch.
func TestBatchesCommittedBeforeACheckpointSurviveACrash(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "crash.db")
	st, err := OpenStore(ctx, "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.wal.pages = 40
	const batches, rows = 30, 50
	for b := range batches {
		logs := make([]store.UsageLog, rows)
		for i := range logs {
			logs[i] = store.UsageLog{Type: store.LogConsume, UserID: 1, TokenID: 1, ChannelID: 1, Model: "m", PromptTokens: 1,
				Quota: int64(b*rows + i), RequestID: fmt.Sprintf("req-%d-%d", b, i), Other: []byte(`{"stream":false}`)}
		}
		if err := st.WriteBatch(ctx, nil, logs); err != nil {
			t.Fatal(err)
		}
	}
	st.wal.wait()
	if runs, _ := st.wal.stats(); runs == 0 {
		t.Fatal("no checkpoint ran: the crash would not find batches in both files")
	}
	if _, err := st.db.ExecContext(ctx, "INSERT INTO usage_logs (type, user_id, token_id, channel_id, model, prompt_tokens, completion_tokens, quota, latency_ms, request_id, created_at)"+
		" VALUES ('consume', 1, 1, 1, 'm', 1, 0, 0, 0, 'req-last', '2026-12-07 00:00:00+00:00')"); err != nil {
		t.Fatal(err) // one more commit, which no checkpoint copies
	}
	crashed := filepath.Join(t.TempDir(), "crash.db")
	for _, suffix := range []string{"", "-wal"} {
		copyFile(t, path+suffix, crashed+suffix)
	}
	after, err := OpenStore(ctx, "sqlite:"+crashed)
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	var n, sum int64
	if err := after.db.QueryRowContext(ctx, "SELECT count(*), sum(quota) FROM usage_logs").Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	if want := int64(batches*rows + 1); n != want {
		t.Errorf("after the crash %d usage rows, want %d", n, want)
	}
	if want := int64(batches*rows) * int64(batches*rows-1) / 2; sum != want {
		t.Errorf("after the crash the rows' quota sums to %d, want %d", sum, want)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
}
