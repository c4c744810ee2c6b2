package ratelimit

import (
	"context"
	"time"
)

// maxBudgets is the most period budgets one call meets: its key's, its
// user's, its team's and its organisation's.
const maxBudgets = 4

// budgetTake is one period counter a reservation must fit in: its key,
// the budget's limit, when the period ends, and the subject whose usage
// rows load the counter the first time it is needed.
type budgetTake struct {
	key    string
	limit  int64
	expire time.Time
	kind   string
	id     int64
	start  time.Time
}

// loadBudget derives a period's spending so far from the usage log, the
// first time this process (or, with Redis, any node) needs it: so it
// survives restarts without a counter of its own in the database.
func (s *Service) loadBudget(ctx context.Context, t *budgetTake) (int64, error) {
	return s.st.PeriodSpent(ctx, t.kind, t.id, t.start)
}

// Levels of a budget as a refusal names them (CONTRACT.md §18).
func level(kind string) string {
	switch kind {
	case "token", "model":
		return "key"
	}
	return kind
}

// alerted reports whether budget alerts name this kind of subject: the
// alert events name users and keys (CONTRACT.md §10).
func alerted(kind string) bool { return kind == "user" || kind == "token" }
