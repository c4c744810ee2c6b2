package storetest

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// booksDays are entries of every ledger class and rows of every kind the
// books tell apart, over three days, at hours that fall on both sides of
// the windows' cuts.
func booksDays(day time.Time) ([]store.LedgerEntry, []store.UsageLog) {
	var entries []store.LedgerEntry
	var logs []store.UsageLog
	for d := range 3 {
		for h, at := range []time.Duration{1 * time.Hour, 5 * time.Hour, 13 * time.Hour, 23*time.Hour + 59*time.Minute} {
			t := day.Add(time.Duration(d)*24*time.Hour + at)
			n := fmt.Sprintf("%d-%d", d, h)
			user, token, team := int64(1+h%2), int64(10+h%2), int64(0)
			if h == 3 {
				team = 7
			}
			e := func(key, kind string, delta, used int64) store.LedgerEntry {
				return store.LedgerEntry{Key: key, Kind: kind, UserID: user, TokenID: token, TeamID: team, Delta: delta,
					TokenDelta: delta, Used: used, CreatedAt: t}
			}
			entries = append(entries, e("top-"+n, store.LedgerTopUp, 1000, 0),
				e("c-"+n+":reserve", store.LedgerReserve, -300, 0), e("c-"+n+":settle", store.LedgerSettle, 100, 200),
				e("p-"+n+":reserve", store.LedgerSettle, -50, 50), e("q-"+n+":reserve", store.LedgerRefund, 0, 0),
				e("r-"+n+":reserve", store.LedgerReserve, -70, 0), e("r-"+n+":release", store.LedgerRefund, 70, 0),
				e("task-a"+n+":reserve", store.LedgerReserve, -40, 0), e("task-a"+n+":settle", store.LedgerSettle, 10, 30),
				e("task-b"+n+":reserve", store.LedgerSettle, -9, 9))
			row := func(typ string, quota int64, other string) store.UsageLog {
				return store.UsageLog{Type: typ, UserID: user, TokenID: token, TeamID: 7, Model: "m", Quota: quota, Other: []byte(other), CreatedAt: t}
			}
			logs = append(logs, row(store.LogConsume, 200, `{}`), row(store.LogConsume, 50, `{"surface":"task"}`),
				row(store.LogConsume, 30, `{"plan":{"id":3}}`), row(store.LogConsume, 20, `{"paid_by":"team"}`),
				row(store.LogRefund, 5, `{}`), row(store.LogError, 0, `{}`), row(store.LogTopUp, 1000, `{}`))
		}
	}
	return entries, logs
}

// wantLedger folds the entries of w by hand, as LedgerTotals must.
func wantLedger(entries []store.LedgerEntry, w store.Window) []string {
	sums := map[store.LedgerTotal]store.LedgerTotal{}
	for _, e := range entries {
		if e.CreatedAt.Before(w.Since) || !e.CreatedAt.Before(w.Until) {
			continue
		}
		k := store.LedgerTotal{UserID: e.UserID, TokenID: e.TokenID, TeamID: e.TeamID, Class: store.LedgerClassOf(e)}
		s := sums[k]
		s.Entries, s.Delta, s.TokenDelta, s.Used = s.Entries+1, s.Delta+e.Delta, s.TokenDelta+e.TokenDelta, s.Used+e.Used
		sums[k] = s
	}
	var out []string
	for k, s := range sums {
		out = append(out, fmt.Sprintf("%d/%d/%d/%s %d %d %d %d", k.UserID, k.TokenID, k.TeamID, k.Class, s.Entries, s.Delta, s.TokenDelta, s.Used))
	}
	sort.Strings(out)
	return out
}

func gotLedger(totals []store.LedgerTotal) []string {
	var out []string
	for _, s := range totals {
		out = append(out, fmt.Sprintf("%d/%d/%d/%s %d %d %d %d", s.UserID, s.TokenID, s.TeamID, s.Class, s.Entries, s.Delta, s.TokenDelta, s.Used))
	}
	sort.Strings(out)
	return out
}

// wantRowBooks folds the rows of w by hand, as LogTotals must.
func wantRowBooks(logs []store.UsageLog, w store.Window) []string {
	sums := map[store.LogTotal]store.LogTotal{}
	for _, l := range logs {
		if l.CreatedAt.Before(w.Since) || !l.CreatedAt.Before(w.Until) {
			continue
		}
		task, team, quota := store.RowBooksOf(l)
		k := store.LogTotal{UserID: l.UserID, TokenID: l.TokenID, Type: l.Type, Task: task, Team: team}
		s := sums[k]
		s.Rows, s.Quota = s.Rows+1, s.Quota+quota
		sums[k] = s
	}
	var out []string
	for k, s := range sums {
		out = append(out, fmt.Sprintf("%d/%d/%s/%v/%d %d %d", k.UserID, k.TokenID, k.Type, k.Task, k.Team, s.Rows, s.Quota))
	}
	sort.Strings(out)
	return out
}

func gotRowBooks(totals []store.LogTotal) []string {
	var out []string
	for _, s := range totals {
		out = append(out, fmt.Sprintf("%d/%d/%s/%v/%d %d %d", s.UserID, s.TokenID, s.Type, s.Task, s.Team, s.Rows, s.Quota))
	}
	sort.Strings(out)
	return out
}

// booksWindows cut the three days of booksDays every way a window can:
// whole days with cut days on both sides, one whole day, inside one day,
// from the ledger's beginning.
func booksWindows(day time.Time) map[string]store.Window {
	return map[string]store.Window{
		"cut days around a whole day": {Since: day.Add(3 * time.Hour), Until: day.Add(48*time.Hour + 13*time.Hour)},
		"one whole day":               {Since: day.Add(24 * time.Hour), Until: day.Add(48 * time.Hour)},
		"inside one day":              {Since: day.Add(24*time.Hour + 2*time.Hour), Until: day.Add(24*time.Hour + 14*time.Hour)},
		"from the beginning":          {Until: day.Add(24*time.Hour + 5*time.Hour)},
	}
}

var booksRollupTests = []namedTest{
	{"the books rollups sum the ledger and the rows as reading them does, whole days and cut ones", func(t *testing.T, s store.Store) {
		day := time.Date(2026, 4, 6, 0, 0, 0, 0, time.UTC)
		entries, logs := booksDays(day)
		must(t, s.Ledger().Apply(ctx(t), entries[:len(entries)/2]), "apply")
		must(t, batchWriter(t, s).WriteBatch(ctx(t), entries[len(entries)/2:], logs), "write batch")
		for name, w := range booksWindows(day) {
			totals, err := s.Books().LedgerTotals(ctx(t), w)
			must(t, err, "ledger totals")
			if got, want := gotLedger(totals), wantLedger(entries, w); fmt.Sprint(got) != fmt.Sprint(want) || len(want) == 0 {
				t.Errorf("%s: ledger totals\n got %v\nwant %v", name, got, want)
			}
			if w.Since.IsZero() {
				continue // LogTotals is of a window
			}
			rows, err := s.Books().LogTotals(ctx(t), w)
			must(t, err, "log totals")
			if got, want := gotRowBooks(rows), wantRowBooks(logs, w); fmt.Sprint(got) != fmt.Sprint(want) || len(want) == 0 {
				t.Errorf("%s: row totals\n got %v\nwant %v", name, got, want)
			}
		}
	}},
}
