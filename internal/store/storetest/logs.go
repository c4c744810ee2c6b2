package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// seedLogs inserts a known set of logs, oldest first, spread one hour apart
// ending at base.
func seedLogs(t *testing.T, s store.Store, base time.Time) []store.UsageLog {
	t.Helper()
	var logs []store.UsageLog
	for i := range 30 {
		l := store.UsageLog{
			Type: store.LogConsume, UserID: int64(1 + i%3), TokenID: int64(10 + i%2), ChannelID: int64(100 + i%5),
			Model: []string{"m-a", "m-b"}[i%2], PromptTokens: i, CompletionTokens: 2 * i, Quota: int64(i * 10),
			LatencyMS: int64(i), RequestID: "req", CreatedAt: base.Add(time.Duration(i-29) * time.Hour),
			TeamID: int64(i % 3), OrgID: int64(i%3+1) / 2,
		}
		if i%10 == 0 {
			l.Type = store.LogError
			l.Other = json.RawMessage(`{"status":502}`)
		}
		logs = append(logs, l)
	}
	must(t, s.Logs().Insert(ctx(t), logs), "insert logs")
	return logs
}

var logTests = []namedTest{
	{"insert then list newest first with every field", func(t *testing.T, s store.Store) {
		base := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
		logs := seedLogs(t, s, base)
		got, total, err := s.Logs().List(ctx(t), store.LogFilter{}, store.Page{PageSize: 100})
		must(t, err, "list")
		if total != 30 || len(got) != 30 {
			t.Fatalf("total %d, len %d, want 30", total, len(got))
		}
		for i := 1; i < len(got); i++ {
			if got[i].ID >= got[i-1].ID {
				t.Fatalf("not newest first at %d: %d then %d", i, got[i-1].ID, got[i].ID)
			}
		}
		newest, want := got[0], logs[29]
		checkUTC(t, "CreatedAt", newest.CreatedAt)
		if newest.Quota != want.Quota || newest.Model != want.Model || newest.UserID != want.UserID || newest.TokenID != want.TokenID ||
			newest.ChannelID != want.ChannelID || newest.PromptTokens != want.PromptTokens || newest.CompletionTokens != want.CompletionTokens ||
			newest.LatencyMS != want.LatencyMS || newest.RequestID != "req" || !newest.CreatedAt.Equal(want.CreatedAt) || newest.Other != nil ||
			newest.TeamID != want.TeamID || newest.OrgID != want.OrgID {
			t.Errorf("newest = %+v, want %+v", newest, want)
		}
		oldest := got[29]
		if oldest.Type != store.LogError || !jsonEqual(oldest.Other, logs[0].Other) {
			t.Errorf("oldest = %+v", oldest)
		}
	}},
	{"filters narrow the list and the total", func(t *testing.T, s store.Store) {
		base := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
		seedLogs(t, s, base)
		cases := []struct {
			name   string
			filter store.LogFilter
			want   int
			check  func(store.UsageLog) bool
		}{
			{"by type", store.LogFilter{Type: store.LogError}, 3, func(l store.UsageLog) bool { return l.Type == store.LogError }},
			{"by model", store.LogFilter{Model: "m-b"}, 15, func(l store.UsageLog) bool { return l.Model == "m-b" }},
			{"by user", store.LogFilter{UserID: 2}, 10, func(l store.UsageLog) bool { return l.UserID == 2 }},
			{"by token", store.LogFilter{TokenID: 11}, 15, func(l store.UsageLog) bool { return l.TokenID == 11 }},
			{"by channel", store.LogFilter{ChannelID: 104}, 6, func(l store.UsageLog) bool { return l.ChannelID == 104 }},
			{"since is inclusive", store.LogFilter{Since: base.Add(-4 * time.Hour)}, 5, func(l store.UsageLog) bool { return !l.CreatedAt.Before(base.Add(-4 * time.Hour)) }},
			{"since in another zone means the same instant", store.LogFilter{Since: base.Add(-4 * time.Hour).In(time.FixedZone("Y", -7*3600))}, 5, nil},
			{"by team", store.LogFilter{TeamID: 2}, 10, func(l store.UsageLog) bool { return l.TeamID == 2 }},
			{"by org", store.LogFilter{OrgID: 1}, 20, func(l store.UsageLog) bool { return l.OrgID == 1 }},
			{"combined user and model", store.LogFilter{UserID: 1, Model: "m-a"}, 5, func(l store.UsageLog) bool { return l.UserID == 1 && l.Model == "m-a" }},
			{"nothing matches", store.LogFilter{Model: "none"}, 0, nil},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				got, total, err := s.Logs().List(ctx(t), tc.filter, store.Page{PageSize: 100})
				must(t, err, "list")
				if total != tc.want || len(got) != tc.want {
					t.Fatalf("total %d, len %d, want %d", total, len(got), tc.want)
				}
				for _, l := range got {
					if tc.check != nil && !tc.check(l) {
						t.Errorf("log %+v does not match the filter", l)
					}
				}
			})
		}
	}},
	{"paging walks newest to oldest without overlap", func(t *testing.T, s store.Store) {
		seedLogs(t, s, time.Now().UTC())
		seen := map[int64]bool{}
		var last int64
		for page := 1; page <= 4; page++ {
			got, total, err := s.Logs().List(ctx(t), store.LogFilter{}, store.Page{Page: page, PageSize: 8})
			must(t, err, "list")
			if total != 30 {
				t.Fatalf("total = %d", total)
			}
			wantLen := min(8, 30-(page-1)*8)
			if len(got) != wantLen {
				t.Fatalf("page %d has %d items, want %d", page, len(got), wantLen)
			}
			for _, l := range got {
				if seen[l.ID] || (last != 0 && l.ID >= last) {
					t.Fatalf("page %d: id %d out of order or repeated", page, l.ID)
				}
				seen[l.ID], last = true, l.ID
			}
		}
	}},
	{"default page size is twenty", func(t *testing.T, s store.Store) {
		seedLogs(t, s, time.Now().UTC())
		got, _, err := s.Logs().List(ctx(t), store.LogFilter{}, store.Page{})
		must(t, err, "list")
		if len(got) != 20 {
			t.Errorf("len = %d, want 20", len(got))
		}
	}},
	{"a large batch and an empty batch insert", func(t *testing.T, s store.Store) {
		must(t, s.Logs().Insert(ctx(t), nil), "empty batch")
		batch := make([]store.UsageLog, 450)
		for i := range batch {
			batch[i] = store.UsageLog{Type: store.LogConsume, UserID: 1, Model: "m"}
		}
		must(t, s.Logs().Insert(ctx(t), batch), "big batch")
		got, total, err := s.Logs().List(ctx(t), store.LogFilter{}, store.Page{PageSize: 5})
		must(t, err, "list")
		if total != 450 || len(got) != 5 {
			t.Errorf("total %d len %d", total, len(got))
		}
		checkUTC(t, "stamped CreatedAt", got[0].CreatedAt)
	}},
	{"batches of every size keep every row and their order", func(t *testing.T, s store.Store) {
		seq := 0
		for _, n := range batchSizes {
			batch := make([]store.UsageLog, n)
			for i := range batch {
				seq++
				batch[i] = store.UsageLog{Type: store.LogConsume, UserID: int64(n), TokenID: int64(i), Model: "m", PromptTokens: seq,
					CompletionTokens: 2 * seq, Quota: int64(3 * seq), RequestID: fmt.Sprintf("r%d", seq)}
			}
			must(t, s.Logs().Insert(ctx(t), batch), fmt.Sprintf("insert %d", n))
		}
		got, total, err := s.Logs().List(ctx(t), store.LogFilter{}, store.Page{PageSize: 1000})
		must(t, err, "list")
		if total != seq || len(got) != seq {
			t.Fatalf("total %d, listed %d, want %d", total, len(got), seq)
		}
		for i, l := range got {
			n := seq - i
			if l.PromptTokens != n || l.CompletionTokens != 2*n || l.Quota != int64(3*n) || l.RequestID != fmt.Sprintf("r%d", n) {
				t.Fatalf("row %d from the newest = %+v, want the row numbered %d", i, l, n)
			}
		}
	}},
	{"get returns one row with every field, and not found past the end", func(t *testing.T, s store.Store) {
		base := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
		seedLogs(t, s, base)
		list, _, err := s.Logs().List(ctx(t), store.LogFilter{Type: store.LogError}, store.Page{PageSize: 1})
		must(t, err, "list")
		got, err := s.Logs().Get(ctx(t), list[0].ID)
		must(t, err, "get")
		if got.ID != list[0].ID || got.RequestID != "req" || got.Type != store.LogError || !jsonEqual(got.Other, list[0].Other) ||
			!got.CreatedAt.Equal(list[0].CreatedAt) {
			t.Errorf("get = %+v, want %+v", got, list[0])
		}
		if _, err := s.Logs().Get(ctx(t), list[0].ID+1000); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("get of a missing row: %v, want ErrNotFound", err)
		}
	}},
	{"prune deletes only rows older than the cut, at most limit per call", func(t *testing.T, s store.Store) {
		base := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
		seedLogs(t, s, base)                           // created base-29h … base, one hour apart
		cut := base.Add(-9*time.Hour - 30*time.Minute) // 20 rows are older
		n, err := s.Logs().Prune(ctx(t), cut, 15)
		must(t, err, "prune")
		if n != 15 {
			t.Fatalf("first prune deleted %d, want 15 (the limit)", n)
		}
		n, err = s.Logs().Prune(ctx(t), cut, 15)
		must(t, err, "prune")
		if n != 5 {
			t.Fatalf("second prune deleted %d, want the 5 left", n)
		}
		left, total, err := s.Logs().List(ctx(t), store.LogFilter{}, store.Page{PageSize: 100})
		must(t, err, "list")
		if total != 10 {
			t.Fatalf("%d rows left, want 10", total)
		}
		for _, l := range left {
			if l.CreatedAt.Before(cut) {
				t.Errorf("row %d of %s survived the cut %s", l.ID, l.CreatedAt, cut)
			}
		}
	}},
}
