package books

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/archive"
	"github.com/turnpike-gw/turnpike/internal/archive/s3bucket"
	"github.com/turnpike-gw/turnpike/internal/archive/s3fake"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// planRun settles a call a plan paid, as admission does: the hold
// reserves nothing, the settle moves no balance and the row carries the
// plan's marker and the charge the plan's window counts.
func (e *ledgerEnv) planRun() {
	ctx := context.Background()
	row := e.row(e.key, store.LogConsume, 300)
	row.Other = []byte(`{"surface":"openai",` + store.PlanMarker + `1,"grant":1,"window":"2026-12-07T10:00:00Z","windows":[1]}}`)
	e.reserve(e.key, "plan-call", 0).SettleWith(ctx, 0, &row)
	must(e.t, e.w.Flush(ctx))
}

// archiveAll archives every row written so far (the job's clock is ten
// days ahead of a retention of seven) and answers the store whose books
// read the archived days back from the S3-compatible fake.
func (e *ledgerEnv) archiveAll() store.Store {
	e.t.Helper()
	_, url := s3fake.New(e.t)
	bucket := s3bucket.New(s3bucket.Options{Endpoint: url, Bucket: "books", AccessKeyID: "AKIDARCHIVE", SecretAccessKey: "s"})
	notFound := func(err error) bool { return errors.Is(err, s3bucket.ErrNotFound) }
	later := time.Now().AddDate(0, 0, 10)
	j := &archive.Job{Logs: e.st.Logs(), Bucket: bucket, Prefix: "gw", Days: 7, Now: func() time.Time { return later },
		Log: slog.New(slog.DiscardHandler), PartRows: 4, DeleteBatch: 8, IsNotFound: notFound}
	if _, err := j.Run(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	if _, left, err := e.st.Logs().List(context.Background(), store.LogFilter{}, store.Page{PageSize: 1}); err != nil || left != 0 {
		e.t.Fatalf("%d rows left in the database after archiving (%v)", left, err)
	}
	return archive.WithArchive(e.st, archive.Reader{Bucket: bucket, Prefix: "gw", IsNotFound: notFound})
}

// Reconciliation over archived days books every row as it books it in the
// database: a team-paid row on its team's shared balance, a plan-drawn row
// on no balance at all. Summed as plain rows of their user, both would
// show as differences.
func TestReconcileOverArchivedDaysBooksTeamPaidAndPlanRowsLikeTheDatabase(t *testing.T) {
	e := newLedgerEnv(t)
	day := time.Now().UTC().Truncate(24 * time.Hour)
	tm := e.teamRun()
	e.planRun()
	w := store.Window{Since: day, Until: day.Add(48 * time.Hour)}
	live := e.reconcile(w)
	if !live.OK || len(live.Differences) != 0 {
		t.Fatalf("the run does not reconcile before archiving: %+v", live.Differences)
	}
	rep, err := Reconcile(context.Background(), e.archiveAll(), w, time.Now())
	must(t, err)
	if !rep.OK || len(rep.Differences) != 0 {
		t.Fatalf("the archived days do not reconcile: %+v", rep.Differences)
	}
	if len(rep.Teams) != 1 || rep.Teams[0].TeamID != tm.ID || len(rep.Users) != 1 {
		t.Fatalf("teams %+v users %+v, want the team and alice", rep.Teams, rep.Users)
	}
	for _, c := range []struct {
		name      string
		got, want Account
	}{{"team", rep.Teams[0], live.Teams[0]}, {"user", rep.Users[0], live.Users[0]}, {"key", rep.Tokens[0], live.Tokens[0]}} {
		if c.got.RowsSum != c.want.RowsSum || c.got.NetSpend != c.want.NetSpend || c.got.BalanceEnd != c.want.BalanceEnd {
			t.Errorf("%s from the archive: rows %d net %d end %d; from the database: rows %d net %d end %d", c.name,
				c.got.RowsSum, c.got.NetSpend, c.got.BalanceEnd, c.want.RowsSum, c.want.NetSpend, c.want.BalanceEnd)
		}
	}
}
