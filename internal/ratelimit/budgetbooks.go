package ratelimit

import (
	"context"
	"strings"
)

// Waiting is what the budget journals hold beside the period counters, by
// counter (without the backend's prefix): the charges of settled shares
// whose settles the sweep has not yet seen stored (the counter has them,
// the rows may not yet), and the charges late records owe (the rows may
// have them before the sweep adds them to the counter).
type Waiting struct {
	settling, late map[string]int64
}

// Waiting reads every owner's journal and the late records once, for a
// reconcile of many budgets. Without Redis nothing waits: the counters
// live and die with their process.
func (s *Service) Waiting(ctx context.Context) (Waiting, error) {
	w := Waiting{settling: map[string]int64{}, late: map[string]int64{}}
	rb, ok := s.be.(*redisBackend)
	if !ok {
		return w, nil
	}
	owners, err := rb.budgetOwners(ctx)
	if err != nil {
		return w, err
	}
	for _, o := range owners {
		recs, err := rb.budgetRecords(ctx, o)
		if err != nil {
			return w, err
		}
		for hold, raw := range recs {
			if sh, ok := parseBudgetRecord(hold, raw); ok && sh.settled {
				for _, k := range sh.keys {
					w.settling[k] += sh.amount
				}
			}
		}
	}
	lates, err := rb.rdb.HGetAll(ctx, rb.budgetLateKey()).Result()
	if err != nil {
		return w, err
	}
	for _, raw := range lates {
		if rec, ok := parseLateRecord(raw); ok {
			for _, k := range rec.keys {
				w.late[strings.TrimPrefix(k, rb.prefix)] += rec.charge
			}
		}
	}
	return w, nil
}

// PeriodBook is a subject's budget counter in its current period (Live)
// beside what the database says it spent since the period began (Stored:
// consume rows and open batch holds), and what the journals say may part
// them for a while (see Waiting).
type PeriodBook struct {
	Live, Stored, Settling, Late int64
}

// Fits says whether the counter agrees with the rows: ahead of them by at
// most open (the reservations still open, which the counter holds at
// their estimate) and the settled shares whose rows may be on their way,
// behind them by at most what late records owe. Calls moving while it is
// read may put a counter ahead of that.
func (b PeriodBook) Fits(open int64) bool {
	return b.Live >= b.Stored-b.Late && b.Live-b.Stored <= open+b.Settling
}

// PeriodBooks is the book of a subject's budget in its current period, w
// read before it (so that an end the sweep decides meanwhile shows as
// still waiting, not as a gap); ok is false without a budget.
func (s *Service) PeriodBooks(ctx context.Context, kind string, id int64, w Waiting) (b PeriodBook, ok bool, err error) {
	l := s.Get(kind, id)
	if l.PeriodQuota <= 0 {
		return b, false, nil
	}
	st, err := s.Period(ctx, kind, id)
	if err != nil {
		return b, false, err
	}
	now := s.Now()
	key := budgetKey(kind, id, l.Period, now)
	b = PeriodBook{Live: st.Used, Settling: w.settling[key], Late: w.late[key]}
	b.Stored, err = s.st.PeriodSpent(ctx, kind, id, PeriodStart(l.Period, now))
	return b, err == nil, err
}
