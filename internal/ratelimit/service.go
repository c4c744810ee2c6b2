package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// backend counts. acquire checks every check against what it holds and,
// only when all fit, counts them all in one atomic step; it fills out with
// what it read and returns the index of the first check that did not fit,
// or -1.
type backend interface {
	// lease names the call's concurrency slots (Redis keeps them by name).
	acquire(ctx context.Context, now time.Time, checks []check, out []reading, lease string) (int, error)
	adjust(ctx context.Context, key ckey, minute, delta int64) error
	release(ctx context.Context, key ckey, lease string) error
	// budgetTake takes amount from every counter of takes, all or none,
	// in one atomic step (one Redis round trip when every counter is
	// loaded). It returns the index of the first counter amount did not
	// fit in and that counter's spending, or -1 and the first counter's
	// spending after the take. A counter not loaded yet is loaded with
	// load first. jr (may be nil) journals the share taken, where the
	// counters outlive the process (see budgetjournal.go).
	budgetTake(ctx context.Context, takes []budgetTake, amount int64, load func(context.Context, *budgetTake) (int64, error), jr *journalTag) (int, int64, error)
	budgetAdd(ctx context.Context, key string, delta int64) (int64, error)
}

// Service is traffic control: the limits of every subject (an immutable
// snapshot swapped on change) and the counts behind them.
type Service struct {
	be    backend
	st    store.TrafficRepo
	log   *slog.Logger
	snap  atomic.Pointer[snapshot]
	clock atomic.Pointer[func() time.Time]
	// onBudget, when set, hears each budget's spending after a settlement.
	onBudget atomic.Pointer[func(BudgetUse)]
	// onRefuse, when set, counts refusals by scope.
	onRefuse atomic.Pointer[func(scope string)]
	node     string
	seq      atomic.Uint64
	// owner names this process's budget shares in the journal (JournalAs).
	owner string
}

// BudgetUse is a subject's spending in its current period after a charge.
type BudgetUse struct {
	Kind   string // store.SubjectUser or store.SubjectToken
	ID     int64
	Used   int64
	Limit  int64
	Period string
	Start  time.Time
}

type snapshot struct {
	tokens map[int64]*Limits
	users  map[int64]*Limits
	groups map[string]*Rate
	teams  map[int64]*Limits
	orgs   map[int64]*Limits
}

// ids is the snapshot's map of a subject kind kept by id (nil for groups).
func (n *snapshot) ids(kind string) map[int64]*Limits {
	switch kind {
	case store.SubjectUser:
		return n.users
	case store.SubjectToken:
		return n.tokens
	case store.SubjectTeam:
		return n.teams
	case store.SubjectOrg:
		return n.orgs
	}
	return nil
}

// New returns traffic control over st. rdb, when not nil, shares the counts
// with every node using the same Redis; nil keeps them in this process.
func New(st store.TrafficRepo, rdb redis.UniversalClient, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Service{st: st, log: log}
	if rdb != nil {
		s.be = newRedisBackend(rdb)
	} else {
		s.be = newMemBackend()
	}
	s.snap.Store(&snapshot{})
	var b [6]byte
	_, _ = rand.Read(b[:])
	s.node = hex.EncodeToString(b[:]) + ":"
	return s
}

// leaseName is a name no other call on any node uses: the node's random
// prefix and a counter. Only the Redis backend needs one.
func (s *Service) leaseName(gauges bool) string {
	if !gauges {
		return ""
	}
	if _, mem := s.be.(*memBackend); mem {
		return ""
	}
	return s.node + strconv.FormatUint(s.seq.Add(1), 36)
}

// SetClock replaces the clock (tests move periods with it).
func (s *Service) SetClock(now func() time.Time) { s.clock.Store(&now) }

// Now is the service's clock.
func (s *Service) Now() time.Time {
	if f := s.clock.Load(); f != nil {
		return (*f)()
	}
	return time.Now()
}

// OnBudget sets who hears budget spending (the alerts).
func (s *Service) OnBudget(f func(BudgetUse)) { s.onBudget.Store(&f) }

// OnRefuse sets who counts refusals (the metrics), by scope: token, user,
// model or budget.
func (s *Service) OnRefuse(f func(scope string)) { s.onRefuse.Store(&f) }

func (s *Service) refused(scope string) {
	if f := s.onRefuse.Load(); f != nil {
		(*f)(scope)
	}
}

// Reload rebuilds the snapshot of limits from the store.
func (s *Service) Reload(ctx context.Context) error {
	rows, err := s.st.Limits(ctx)
	if err != nil {
		return err
	}
	n := &snapshot{tokens: map[int64]*Limits{}, users: map[int64]*Limits{}, groups: map[string]*Rate{},
		teams: map[int64]*Limits{}, orgs: map[int64]*Limits{}}
	for _, r := range rows {
		var l Limits
		if err := json.Unmarshal(r.Spec, &l); err != nil {
			s.log.Warn("stored limits are unreadable; ignored", "kind", r.Kind, "subject", r.Subject, "err", err)
			continue
		}
		if l.IsZero() {
			continue
		}
		if r.Kind == store.SubjectGroup {
			n.groups[r.Subject] = &l.Rate
			continue
		}
		id, err := strconv.ParseInt(r.Subject, 10, 64)
		if m := n.ids(r.Kind); m != nil && err == nil {
			m[id] = &l
		}
	}
	s.snap.Store(n)
	return nil
}

// Get returns the limits stored for a subject (zero when none).
func (s *Service) Get(kind string, id int64) Limits {
	if l := s.snap.Load().ids(kind)[id]; l != nil {
		return *l
	}
	return Limits{}
}

// Group returns the rate limits of a group.
func (s *Service) Group(name string) Rate {
	if r := s.snap.Load().groups[name]; r != nil {
		return *r
	}
	return Rate{}
}

// Set stores a subject's limits after validating them, and reloads.
func (s *Service) Set(ctx context.Context, kind, subject string, l Limits) error {
	if err := l.Validate(); err != nil {
		return err
	}
	var spec json.RawMessage
	if !l.IsZero() {
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		spec = b
	}
	if err := s.st.PutLimits(ctx, kind, subject, spec); err != nil {
		return err
	}
	return s.Reload(ctx)
}

// Forget drops a deleted subject's limits.
func (s *Service) Forget(ctx context.Context, kind, subject string) error {
	if err := s.st.PutLimits(ctx, kind, subject, nil); err != nil {
		return err
	}
	return s.Reload(ctx)
}

// PeriodStatus is a subject's budget as the admin API shows it.
type PeriodStatus struct {
	Used     int64
	ResetsAt *time.Time
}

// Period returns a subject's spending in its current period and when the
// period ends; zero when it has no budget.
func (s *Service) Period(ctx context.Context, kind string, id int64) (PeriodStatus, error) {
	l := s.Get(kind, id)
	if l.PeriodQuota <= 0 {
		return PeriodStatus{}, nil
	}
	now := s.Now()
	t := []budgetTake{{key: budgetKey(kind, id, l.Period, now), limit: l.PeriodQuota, expire: PeriodEnd(l.Period, now),
		kind: kind, id: id, start: PeriodStart(l.Period, now)}}
	_, used, err := s.be.budgetTake(ctx, t, 0, s.loadBudget, nil)
	if err != nil {
		return PeriodStatus{}, err
	}
	end := PeriodEnd(l.Period, now)
	return PeriodStatus{Used: used, ResetsAt: &end}, nil
}

// budgetKey names a period counter. Keys and users keep the one-letter
// names they always had; teams and organisations, whose initials would
// meet a key's, are spelt out.
func budgetKey(kind string, id int64, period string, now time.Time) string {
	k := kind
	if kind == store.SubjectToken || kind == store.SubjectUser {
		k = kind[:1]
	}
	return fmt.Sprintf("b:%s:%d:%s:%d", k, id, period, PeriodStart(period, now).Unix())
}

// GetSubject is Get or Group by the subject's stored name.
func (s *Service) GetSubject(kind, subject string) Limits {
	if kind == store.SubjectGroup {
		return Limits{Rate: s.Group(subject)}
	}
	id, _ := strconv.ParseInt(subject, 10, 64)
	return s.Get(kind, id)
}
