package archive_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/archive"
	"github.com/turnpike-gw/turnpike/internal/archive/s3bucket"
	"github.com/turnpike-gw/turnpike/internal/archive/s3fake"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

var now = time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)

// seed writes rows on three old days and today, and returns the quota sum
// of each day's rows.
func seed(t *testing.T, st store.Store) map[string]int64 {
	t.Helper()
	sums := map[string]int64{}
	var logs []store.UsageLog
	for d, n := range map[int]int{-12: 7, -11: 5, -10: 3, 0: 4} {
		day := now.AddDate(0, 0, d).Truncate(24 * time.Hour)
		for i := range n {
			q := int64(100*(i+1) + d*(-1))
			logs = append(logs, store.UsageLog{Type: store.LogConsume, UserID: 1, TokenID: 2, ChannelID: 3, Model: "m",
				Quota: q, Other: []byte(`{"upstream_cost_usd":"0.001"}`), CreatedAt: day.Add(time.Duration(i) * time.Hour)})
			sums[day.Format(time.DateOnly)] += q
		}
	}
	if err := st.Logs().Insert(context.Background(), logs); err != nil {
		t.Fatal(err)
	}
	return sums
}

func job(t *testing.T, st store.Store, url string) *archive.Job {
	b := s3bucket.New(s3bucket.Options{Endpoint: url, Bucket: "books", AccessKeyID: "AKIDARCHIVE", SecretAccessKey: "s"})
	return &archive.Job{Logs: st.Logs(), Bucket: b, Prefix: "gw/", Days: 7, Now: func() time.Time { return now },
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), PartRows: 3, DeleteBatch: 2,
		IsNotFound: func(err error) bool { return errors.Is(err, s3bucket.ErrNotFound) }}
}

func open(t *testing.T) store.Store {
	st, err := sqlstore.Open(context.Background(), sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestArchiveWritesEachOldDayInPartsWithAManifestThenDeletesOnlyThoseRows(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	sums := seed(t, st)
	fake, url := s3fake.New(t)
	res, err := job(t, st, url).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || res[0].Day != "2026-03-08" || res[0].Archived != 7 || res[0].Deleted != 7 {
		t.Fatalf("days: %+v", res)
	}
	keys := fake.Keys()
	sort.Strings(keys)
	want := []string{"gw/usage/2026/03/08/00001.jsonl.gz", "gw/usage/2026/03/08/00002.jsonl.gz", "gw/usage/2026/03/08/00003.jsonl.gz",
		"gw/usage/2026/03/08/manifest.json", "gw/usage/2026/03/09/00001.jsonl.gz", "gw/usage/2026/03/09/00002.jsonl.gz",
		"gw/usage/2026/03/09/manifest.json", "gw/usage/2026/03/10/00001.jsonl.gz", "gw/usage/2026/03/10/manifest.json"}
	if len(keys) != len(want) {
		t.Fatalf("objects: %v", keys)
	}
	for i := range want {
		if keys[i] != want[i] {
			t.Fatalf("objects: %v", keys)
		}
	}
	left, total, err := st.Logs().List(ctx, store.LogFilter{}, store.Page{PageSize: 100})
	if err != nil || total != 4 {
		t.Fatalf("rows left: %d %v", total, err)
	}
	for _, l := range left {
		if l.CreatedAt.Before(now.Truncate(24 * time.Hour)) {
			t.Fatalf("an archived day's row is still there: %+v", l)
		}
	}
	// The books of the archived days read the archive: the same totals
	// as the rows had.
	books := archive.WithArchive(st, archive.Reader{Bucket: s3bucket.New(s3bucket.Options{Endpoint: url, Bucket: "books",
		AccessKeyID: "AKIDARCHIVE", SecretAccessKey: "s"}), Prefix: "gw", IsNotFound: func(err error) bool { return errors.Is(err, s3bucket.ErrNotFound) }})
	for day, sum := range sums {
		d, _ := time.Parse(time.DateOnly, day)
		totals, err := books.Books().LogTotals(ctx, store.Window{Since: d, Until: d.Add(24 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		var got int64
		for _, tt := range totals {
			got += tt.Quota
		}
		if got != sum {
			t.Errorf("day %s: books read quota %d, the rows had %d", day, got, sum)
		}
	}
	// A second run finds nothing to do.
	if res, err := job(t, st, url).Run(ctx); err != nil || len(res) != 0 {
		t.Fatalf("second run: %+v %v", res, err)
	}
}

func TestADayWhoseArchiveDoesNotReadBackKeepsItsRows(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	seed(t, st)
	fake, url := s3fake.New(t)
	fake.Corrupt("gw/usage/2026/03/08/00002.jsonl.gz")
	if _, err := job(t, st, url).Run(ctx); err == nil {
		t.Fatal("a part that does not read back passed")
	}
	_, total, _ := st.Logs().List(ctx, store.LogFilter{}, store.Page{})
	if total != 19 {
		t.Fatalf("rows left after a failed check: %d, want all 19", total)
	}
	// The next run reads the archive written, adds nothing twice and
	// deletes.
	res, err := job(t, st, url).Run(ctx)
	if err != nil || len(res) != 3 || res[0].Archived != 0 || res[0].Deleted != 7 {
		t.Fatalf("retry: %+v %v", res, err)
	}
}

func TestWithoutRetentionNothingIsArchived(t *testing.T) {
	st := open(t)
	seed(t, st)
	_, url := s3fake.New(t)
	j := job(t, st, url)
	j.Days = 0
	if res, err := j.Run(context.Background()); err != nil || res != nil {
		t.Fatalf("%+v %v", res, err)
	}
}

// A day's logged contents leave with its rows: the job hands each day's
// window to Contents before it deletes the rows, and a day whose contents
// could not be moved keeps its rows.
func TestEachArchivedDaysContentsAreMovedBeforeItsRowsAreDeleted(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	seed(t, st)
	_, url := s3fake.New(t)
	j := job(t, st, url)
	failed := errors.New("bucket refused")
	j.Contents = func(_ context.Context, w store.Window) (int64, error) {
		_, total, _ := st.Logs().List(ctx, store.LogFilter{}, store.Page{})
		if total != 19 {
			t.Errorf("rows were deleted before the contents of %v moved: %d left", w.Since, total)
		}
		return 0, failed
	}
	if _, err := j.Run(ctx); !errors.Is(err, failed) {
		t.Fatalf("run: %v", err)
	}
	if _, total, _ := st.Logs().List(ctx, store.LogFilter{}, store.Page{}); total != 19 {
		t.Fatalf("rows left after the contents failed: %d, want all 19", total)
	}
	var days []string
	j.Contents = func(_ context.Context, w store.Window) (int64, error) {
		days = append(days, w.Since.Format(time.DateOnly)+"/"+w.Until.Format(time.DateOnly))
		return 1, nil
	}
	if res, err := j.Run(ctx); err != nil || len(res) != 3 {
		t.Fatalf("run: %+v %v", res, err)
	}
	if strings.Join(days, " ") != "2026-03-08/2026-03-09 2026-03-09/2026-03-10 2026-03-10/2026-03-11" {
		t.Errorf("contents moved for %v", days)
	}
}
