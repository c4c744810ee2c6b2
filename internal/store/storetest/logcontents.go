package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

var logContentTests = []namedTest{
	{"contents are kept by ref, a ref stored twice is kept once, and a day is read and pruned", func(t *testing.T, s store.Store) {
		r := s.LogContents()
		day := time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC)
		big := strings.Repeat("é", 40_000) // 80 KB: past a 64 KB text column
		var cs []store.LogContent
		for i, ref := range []string{"20260308-000000000000000a", "20260308-000000000000000b", "20260308-000000000000000c"} {
			cs = append(cs, store.LogContent{Ref: ref, UserID: int64(i + 1), Request: `{"q":"` + ref + `"}`, Answer: big,
				RequestTruncated: i == 1, AnswerTruncated: true, CreatedAt: day.Add(time.Duration(i) * time.Hour)})
		}
		next := store.LogContent{Ref: "20260309-000000000000000d", UserID: 9, Request: "q", Answer: "a", CreatedAt: day.Add(25 * time.Hour)}
		must(t, r.Insert(ctx(t), append(cs, next)), "insert")
		dup := cs[0]
		dup.Answer = "other"
		must(t, r.Insert(ctx(t), []store.LogContent{dup}), "insert a stored ref again")
		got, err := r.Get(ctx(t), cs[0].Ref)
		if err != nil || got.Answer != big || got.UserID != 1 || !got.AnswerTruncated || got.RequestTruncated || !sameTime(got.CreatedAt, cs[0].CreatedAt) {
			t.Fatalf("get: %d bytes, user %d, truncated %v/%v, at %v, %v", len(got.Answer), got.UserID, got.RequestTruncated, got.AnswerTruncated, got.CreatedAt, err)
		}
		checkUTC(t, "created_at", got.CreatedAt)
		_, err = r.Get(ctx(t), "20260308-ffffffffffffffff")
		wantErr(t, err, store.ErrNotFound, "a missing ref")
		w := store.Window{Since: day, Until: day.Add(24 * time.Hour)}
		var refs []string
		must(t, r.Each(ctx(t), w, func(c store.LogContent) error { refs = append(refs, c.Ref); return nil }), "each")
		if strings.Join(refs, ",") != cs[0].Ref+","+cs[1].Ref+","+cs[2].Ref {
			t.Fatalf("the day's contents: %v", refs)
		}
		n, err := r.PruneRange(ctx(t), w, 2)
		if err != nil || n != 2 {
			t.Fatalf("prune: %d, %v", n, err)
		}
		n, err = r.PruneRange(ctx(t), w, 2)
		if err != nil || n != 1 {
			t.Fatalf("prune the rest: %d, %v", n, err)
		}
		if _, err := r.Get(ctx(t), next.Ref); err != nil {
			t.Fatalf("a content of the next day was pruned: %v", err)
		}
	}},
	{"a group's and a key's log_content are stored apart from the rest of them", func(t *testing.T, s store.Store) {
		must(t, s.Groups().Upsert(ctx(t), store.Group{Name: "audited", Ratio: 1}), "upsert")
		on := &store.ContentLogging{Enabled: true, MaxKB: 16}
		must(t, s.Groups().SetLogContent(ctx(t), "audited", on), "set")
		must(t, s.Groups().Upsert(ctx(t), store.Group{Name: "audited", Ratio: 2}), "upsert the ratio again")
		gs, err := s.Groups().List(ctx(t))
		must(t, err, "list")
		for _, g := range gs {
			if g.Name == "audited" && (g.Ratio != 2 || g.LogContent == nil || *g.LogContent != *on) {
				t.Fatalf("group %+v %+v", g, g.LogContent)
			}
		}
		wantErr(t, s.Groups().SetLogContent(ctx(t), "missing", on), store.ErrNotFound, "a missing group")
		u := newUser(t, s, "lc", 0)
		tok := newToken(t, s, u, "k", -1)
		tok.LogContent = &store.ContentLogging{MaxKB: 64}
		must(t, s.Tokens().Update(ctx(t), tok), "update")
		back, err := s.Tokens().Get(ctx(t), tok.ID)
		if err != nil || back.LogContent == nil || *back.LogContent != (store.ContentLogging{MaxKB: 64}) {
			t.Fatalf("token %+v, %v", back, err)
		}
		back.LogContent = nil
		must(t, s.Tokens().Update(ctx(t), back), "update to none")
		if again, _ := s.Tokens().Get(ctx(t), tok.ID); again.LogContent != nil {
			t.Fatalf("token kept %+v", again.LogContent)
		}
	}},
}
