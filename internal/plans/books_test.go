package plans

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// settleWithRow settles a draw at charge and writes its usage row, as the
// billing writer does for a call.
func (e *env) settleWithRow(t *testing.T, d *Draw, charge int64) {
	t.Helper()
	d.Settle(context.Background(), charge)
	row := store.UsageLog{Type: store.LogConsume, UserID: user, Model: "m1", Quota: charge,
		Other: d.Mark(json.RawMessage(`{"endpoint":"chat","stream":false}`)), CreatedAt: e.now}
	if err := e.st.Logs().Insert(context.Background(), []store.UsageLog{row}); err != nil {
		t.Fatal(err)
	}
}

func TestMarkAddsThePlanToARowsOther(t *testing.T) {
	d := &Draw{plan: 3, grant: 12, starts: []int64{1765101600000, 1765000000000}}
	for _, other := range []string{``, `{}`, `{"stream":true}`} {
		got := d.Mark(json.RawMessage(other))
		var m marked
		if err := json.Unmarshal(got, &m); err != nil || m.Plan == nil || m.Plan.ID != 3 || m.Plan.Grant != 12 || len(m.Plan.Windows) != 2 {
			t.Errorf("Mark(%q) = %s (%v)", other, got, err)
		}
		if !strings.Contains(string(got), store.PlanMarker) || !strings.Contains(string(got), `"window":"2025-12-07T10:00:00Z"`) {
			t.Errorf("Mark(%q) = %s: no marker or window start", other, got)
		}
	}
}

func TestReconcileFindsATamperedWindow(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		s := e.node(t)
		e.isolate(s)
		for _, c := range []int64{30, 25} {
			d, err := e.take(t, s, 40)
			if err != nil || d == nil {
				t.Fatal(d, err)
			}
			e.settleWithRow(t, d, c)
		}
		books, err := s.Reconcile(ctx, nil)
		if err != nil || len(books) != 2 {
			t.Fatalf("books: %+v, %v", books, err)
		}
		for _, b := range books {
			if !b.OK || b.Live != 55 || b.RowsSum != 55 {
				t.Errorf("untouched window %d: %+v, want 55 live and in rows", b.Window, b)
			}
		}
		// Someone adds 5 to the live count of the hour's window only.
		if rb, ok := s.be.(*redisBackend); ok {
			if err := rb.rdb.HIncrBy(ctx, rb.key(e.grant.ID), "u1", 5).Err(); err != nil {
				t.Fatal(err)
			}
		} else {
			ws, _ := e.st.Plans().Windows(ctx, e.grant.ID)
			if err := e.st.Plans().Add(ctx, e.grant.ID, []int64{ws[0].StartMS}, 5, store.PlanMark{}); err != nil {
				t.Fatal(err)
			}
		}
		books, err = s.Reconcile(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if books[0].OK || books[0].Live != 60 || books[0].RowsSum != 55 || !strings.Contains(books[0].Message, "window 1") {
			t.Errorf("tampered window: %+v", books[0])
		}
		if !books[1].OK {
			t.Errorf("the untouched week window is reported: %+v", books[1])
		}
	})
}

// Redis lost the windows (a restart without persistence): the next draw
// rebuilds them from the plan-drawn rows, starts included.
func TestRedisWindowsAreRebuiltFromTheRows(t *testing.T) {
	e := newEnv(t, true)
	ctx := context.Background()
	s := e.node(t)
	e.isolate(s)
	opened := e.now
	d, _ := e.take(t, s, 50)
	e.settleWithRow(t, d, 45)
	rb := s.be.(*redisBackend)
	if err := rb.rdb.Del(ctx, rb.key(e.grant.ID)).Err(); err != nil {
		t.Fatal(err)
	}
	d, err := e.take(t, s, 50)
	if err != nil || d == nil {
		t.Fatal(d, err)
	}
	if d.starts[0] != opened.UnixMilli() {
		t.Errorf("the rebuilt window starts at %d, want the first call's %d", d.starts[0], opened.UnixMilli())
	}
	if d, _ := e.take(t, s, 10); d != nil {
		t.Error("a draw past the rebuilt window's quota (45+50+10 > 100) was taken")
	}
}
