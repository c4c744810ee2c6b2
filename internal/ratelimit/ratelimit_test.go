package ratelimit

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// fakeRepo is an in-memory TrafficRepo.
type fakeRepo struct {
	rows  []store.LimitRow
	spent map[string]int64
}

func (f *fakeRepo) Limits(context.Context) ([]store.LimitRow, error) { return f.rows, nil }
func (f *fakeRepo) PutLimits(_ context.Context, kind, subject string, spec json.RawMessage) error {
	for i, r := range f.rows {
		if r.Kind == kind && r.Subject == subject {
			f.rows = append(f.rows[:i], f.rows[i+1:]...)
			break
		}
	}
	if len(spec) > 0 {
		f.rows = append(f.rows, store.LimitRow{Kind: kind, Subject: subject, Spec: spec})
	}
	return nil
}
func (f *fakeRepo) PeriodSpent(_ context.Context, kind string, id int64, _ time.Time) (int64, error) {
	return f.spent[kind+strconv.FormatInt(id, 10)], nil
}
func (f *fakeRepo) Granted(context.Context, int64) (int64, error)         { return 0, nil }
func (f *fakeRepo) ClaimNotice(context.Context, string) (bool, error)     { return true, nil }
func (f *fakeRepo) Setting(context.Context, string) (string, bool, error) { return "", false, nil }
func (f *fakeRepo) PutSetting(context.Context, string, string) error      { return nil }

func newTestService(t testing.TB, now *time.Time) *Service {
	s := New(&fakeRepo{spent: map[string]int64{}}, nil, nil)
	s.SetClock(func() time.Time { return *now })
	return s
}

func set(t testing.TB, s *Service, kind, subject string, l Limits) {
	t.Helper()
	if err := s.Set(context.Background(), kind, subject, l); err != nil {
		t.Fatal(err)
	}
}

func TestRequestsPerMinuteRefuseTheCallPastTheLimitWithRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 30, 0, time.UTC)
	s := newTestService(t, &now)
	set(t, s, store.SubjectToken, "7", Limits{Rate: Rate{RPM: 3}})
	sub := Subject{UserID: 1, TokenID: 7, Model: "m"}
	for i := range 3 {
		l, err := s.For(sub).Acquire(context.Background(), 0)
		if err != nil {
			t.Fatalf("call %d refused: %v", i, err)
		}
		h := http.Header{}
		l.SetHeaders(h)
		if got := h.Get("x-ratelimit-remaining-requests"); got != strconv.Itoa(2-i) {
			t.Fatalf("call %d: remaining %q", i, got)
		}
		if h.Get("x-ratelimit-limit-requests") != "3" || h.Get("x-ratelimit-reset-requests") == "" {
			t.Fatalf("headers %v", h)
		}
	}
	_, err := s.For(sub).Acquire(context.Background(), 0)
	var rf *Refused
	if !errors.As(err, &rf) || rf.Err.Status != 429 || rf.Err.Code != "rate_limit_exceeded" {
		t.Fatalf("fourth call: %v", err)
	}
	h := http.Header{}
	rf.SetHeaders(h)
	if ra, _ := strconv.Atoi(h.Get("Retry-After")); ra < 1 || ra > 60 {
		t.Fatalf("Retry-After %q", h.Get("Retry-After"))
	}
	// Two minutes later the window is empty again.
	now = now.Add(2 * time.Minute)
	if _, err := s.For(sub).Acquire(context.Background(), 0); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

func TestTokensPerMinuteAreCorrectedAtSettlement(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	s := newTestService(t, &now)
	set(t, s, store.SubjectUser, "1", Limits{Rate: Rate{TPM: 1000}})
	sub := Subject{UserID: 1, TokenID: 7}
	l, err := s.For(sub).Acquire(context.Background(), 900)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.For(sub).Acquire(context.Background(), 200); err == nil {
		t.Fatal("a call past the estimate was admitted")
	}
	l.Settle(context.Background(), 100) // it used far less than estimated
	l.Release(context.Background())
	if _, err := s.For(sub).Acquire(context.Background(), 800); err != nil {
		t.Fatalf("the corrected count should leave room: %v", err)
	}
}

func TestConcurrencyIsGivenBackWhenTheCallEnds(t *testing.T) {
	now := time.Now()
	s := newTestService(t, &now)
	set(t, s, store.SubjectGroup, "vip", Limits{Rate: Rate{Concurrency: 1}})
	sub := Subject{UserID: 3, Group: "vip"}
	l, err := s.For(sub).Acquire(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.For(sub).Acquire(context.Background(), 0); err == nil {
		t.Fatal("a second concurrent call was admitted")
	}
	if _, err := s.For(Subject{UserID: 4, Group: "vip"}).Acquire(context.Background(), 0); err != nil {
		t.Fatalf("group limits apply to each user on its own: %v", err)
	}
	l.Release(context.Background())
	l.Release(context.Background()) // twice is harmless
	if _, err := s.For(sub).Acquire(context.Background(), 0); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

func TestUserLimitsWinOverTheGroupsFieldByField(t *testing.T) {
	now := time.Now()
	s := newTestService(t, &now)
	set(t, s, store.SubjectGroup, "vip", Limits{Rate: Rate{RPM: 10, TPM: 500}})
	set(t, s, store.SubjectUser, "3", Limits{Rate: Rate{RPM: 1}})
	p := s.For(Subject{UserID: 3, Group: "vip"})
	if p.user.RPM != 1 || p.user.TPM != 500 {
		t.Fatalf("effective %+v", p.user)
	}
	if s.For(Subject{UserID: 9, Group: "default"}) != nil {
		t.Fatal("a subject without limits should have no plan")
	}
}

func TestModelLimitsApplyOnlyToTheirModel(t *testing.T) {
	now := time.Now()
	s := newTestService(t, &now)
	set(t, s, store.SubjectToken, "7", Limits{ModelLimits: map[string]ModelRate{"big": {RPM: 1}}})
	for i, want := range []bool{true, false} {
		_, err := s.For(Subject{UserID: 1, TokenID: 7, Model: "big"}).Acquire(context.Background(), 0)
		if (err == nil) != want {
			t.Fatalf("call %d on big: %v", i, err)
		}
	}
	if _, err := s.For(Subject{UserID: 1, TokenID: 7, Model: "small"}).Acquire(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
}

func TestBudgetsHoldEstimatesAndResetWithThePeriod(t *testing.T) {
	now := time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC) // a Sunday
	s := newTestService(t, &now)
	set(t, s, store.SubjectToken, "7", Limits{PeriodQuota: 100, Period: Week})
	sub := Subject{UserID: 1, TokenID: 7}
	ctx := context.Background()
	h, err := s.For(sub).Hold(ctx, 80, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.For(sub).Hold(ctx, 30, ""); err == nil {
		t.Fatal("a hold past the budget was admitted")
	} else if rf := (*Refused)(nil); !errors.As(err, &rf) || rf.Err.Code != "budget_exceeded" || rf.Err.Status != 429 {
		t.Fatalf("refusal %v", err)
	}
	h.Settle(ctx, 50)
	st, _ := s.Period(ctx, store.SubjectToken, 7)
	if st.Used != 50 || !st.ResetsAt.Equal(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("status %+v", st)
	}
	h2, err := s.For(sub).Hold(ctx, 50, "")
	if err != nil {
		t.Fatal(err)
	}
	h2.Refund(ctx)
	now = now.Add(2 * time.Hour) // Monday: a new week
	if st, _ := s.Period(ctx, store.SubjectToken, 7); st.Used != 0 {
		t.Fatalf("the new week starts at %d", st.Used)
	}
}

func TestPeriodsFollowTheUTCCalendar(t *testing.T) {
	at := time.Date(2026, 3, 4, 15, 4, 5, 0, time.FixedZone("x", 5*3600)) // Wednesday 10:04 UTC
	for _, c := range []struct{ period, start, end string }{
		{Day, "2026-03-04", "2026-03-05"},
		{Week, "2026-03-02", "2026-03-09"},
		{Month, "2026-03-01", "2026-04-01"},
	} {
		if got := PeriodStart(c.period, at).Format(time.DateOnly); got != c.start {
			t.Errorf("%s start %s, want %s", c.period, got, c.start)
		}
		if got := PeriodEnd(c.period, at).Format(time.DateOnly); got != c.end {
			t.Errorf("%s end %s, want %s", c.period, got, c.end)
		}
	}
}

func TestLimitValuesAreValidatedByField(t *testing.T) {
	for _, c := range []struct {
		name  string
		l     Limits
		field string
	}{
		{"negative rpm", Limits{Rate: Rate{RPM: -1}}, "rpm"},
		{"negative concurrency", Limits{Rate: Rate{Concurrency: -2}}, "concurrency"},
		{"unknown period", Limits{PeriodQuota: 5, Period: "year"}, "period"},
		{"budget without period", Limits{PeriodQuota: 5}, "period"},
		{"negative budget", Limits{PeriodQuota: -5, Period: Day}, "period_quota"},
		{"negative model tpm", Limits{ModelLimits: map[string]ModelRate{"m": {TPM: -1}}}, "model_limits.m.tpm"},
	} {
		var fe *FieldError
		if err := c.l.Validate(); !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestParseCountTakesWholeNonNegativeNumbers(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{{"5", 5, true}, {`"7"`, 7, true}, {"0", 0, true}, {"2e3", 2000, true}, {"-1", 0, false}, {"1.5", 0, false},
		{`"abc"`, 0, false}, {"null", 0, false}, {"true", 0, false}, {"1e300", 0, false}} {
		got, err := ParseCount("rpm", json.RawMessage(c.in))
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("%s: %d %v", c.in, got, err)
		}
	}
}

func FuzzParseCount(f *testing.F) {
	for _, s := range []string{"5", `"7"`, "-1", "1.5", "1e300", `"  9 "`, "null"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		n, err := ParseCount("rpm", json.RawMessage(in))
		if err == nil && n < 0 {
			t.Fatalf("%q parsed to %d", in, n)
		}
	})
}

func FuzzParseModelLimits(f *testing.F) {
	for _, s := range []string{`{"m":{"rpm":1,"tpm":2}}`, `{"":{}}`, `{"m":{"x":1}}`, `[]`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		m, err := ParseModelLimits(json.RawMessage(in))
		if err != nil {
			return
		}
		l := Limits{ModelLimits: m}
		if err := l.Validate(); err != nil {
			t.Fatalf("%q parsed into invalid limits: %v", in, err)
		}
	})
}

// BenchmarkAcquireRelease is the limiter's cost per call on the single-node
// path: resolving the plan, counting rpm, tpm and concurrency of a key and
// its user, writing the headers, settling and releasing.
func BenchmarkAcquireRelease(b *testing.B) {
	s := New(&fakeRepo{}, nil, nil)
	ctx := context.Background()
	set(b, s, store.SubjectToken, "7", Limits{Rate: Rate{RPM: 1 << 40, TPM: 1 << 50, Concurrency: 1 << 30}})
	set(b, s, store.SubjectUser, "1", Limits{Rate: Rate{RPM: 1 << 40, TPM: 1 << 50, Concurrency: 1 << 30}})
	sub := Subject{UserID: 1, TokenID: 7, Group: "default", Model: "gpt"}
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			p := s.For(sub)
			l, err := p.Acquire(ctx, 1500)
			if err != nil {
				b.Fatal(err)
			}
			l.SetHeaders(http.Header{})
			l.Settle(ctx, 700)
			l.Release(ctx)
		}
	})
	b.StopTimer()
	// CPU time, not wall time: on a shared machine the wall clock counts
	// time spent waiting for a core.
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time (user and system) the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkUnlimited is the cost for a key without limits.
func BenchmarkUnlimited(b *testing.B) {
	s := New(&fakeRepo{}, nil, nil)
	sub := Subject{UserID: 1, TokenID: 7, Group: "default", Model: "gpt"}
	for b.Loop() {
		if s.For(sub) != nil {
			b.Fatal("plan")
		}
	}
}

// A budget share restored later (a task or batch ended by a poller) ends
// like one taken then, on the period it was held in while that period
// lasts; restored after its period ended, it corrects nothing.
func TestARestoredBudgetShareEndsOnThePeriodItWasHeldIn(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	s := newTestService(t, &now)
	set(t, s, store.SubjectToken, "7", Limits{PeriodQuota: 1000, Period: Day})
	sub := Subject{UserID: 1, TokenID: 7}
	ctx := context.Background()
	heldAt := now
	if _, err := s.For(sub).Hold(ctx, 300, ""); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	r := s.For(sub).Restore(heldAt, 300, "", "")
	if keys := r.Keys(); len(keys) != 1 || keys[0] == "" || r.Amount() != 300 {
		t.Fatalf("restored share: keys %v, amount %d", keys, r.Amount())
	}
	r.Settle(ctx, 120)
	r.Settle(ctx, 999) // ended already: nothing more
	if st, _ := s.Period(ctx, store.SubjectToken, 7); st.Used != 120 {
		t.Fatalf("used %d after the restored share settled at 120", st.Used)
	}
	if _, err := s.For(sub).Hold(ctx, 400, ""); err != nil {
		t.Fatal(err)
	}
	now = now.Add(24 * time.Hour) // the next day
	late := s.For(sub).Restore(heldAt, 400, "", "")
	late.Refund(ctx)
	if st, _ := s.Period(ctx, store.SubjectToken, 7); st.Used != 0 {
		t.Fatalf("the new day starts at %d", st.Used)
	}
	if keys := late.Keys(); len(keys) != 1 || keys[0] != "" {
		t.Errorf("a share of an ended period names counters %v", keys)
	}
}
