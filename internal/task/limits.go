package task

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ratelimit"
)

// Task submissions are requests of a key like any other (CONTRACT §10):
// they count against its rate limits while the submit runs, and their
// reservation is held against its period budgets, corrected when the task
// settles or is refunded.

// limitsFor is the traffic-control plan of a task's key; nil without
// traffic control or limits.
func (s *Service) limitsFor(userID, tokenID int64, group, model string) *ratelimit.Plan {
	if s.d.Limits == nil {
		return nil
	}
	return s.d.Limits.For(ratelimit.Subject{UserID: userID, TokenID: tokenID, Group: group, Model: model})
}

// admitSubmission counts a submission against the rate limits; the lease
// is released when the submit ends (its concurrency is the submit's).
func (s *Service) admitSubmission(ctx context.Context, sub *submission) (*ratelimit.Lease, error) {
	sub.limits = s.limitsFor(sub.principal.UserID, sub.principal.TokenID, sub.principal.Group, sub.model)
	return sub.limits.Acquire(ctx, 0)
}

// correctBudget settles the period budgets of a task whose reservation was
// held at submission: charge is what it finally cost (0 when refunded).
func (s *Service) correctBudget(ctx context.Context, t *Task, charge int64) {
	plan := s.limitsFor(t.UserID, t.TokenID, t.Group, t.Model)
	plan.Adjust(ctx, time.UnixMilli(t.CreatedAt), t.QuotaReserved, charge)
}

// refusalHeaders puts Retry-After and the rate-limit headers on the answer
// to a submission refused by traffic control.
func refusalHeaders(h http.Header, err error) {
	var rf *ratelimit.Refused
	if errors.As(err, &rf) {
		rf.SetHeaders(h)
	}
}
