package task

import (
	"context"
	"time"

	"github.com/turnpike-gw/turnpike/internal/admission"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
)

// Task submissions are requests of a key like any other (CONTRACT §10):
// they pass the admission seam chat calls pass (admission.Gate), counting
// against the key's rate limits while the submit runs and holding their
// reservation against its period budgets. What is the task's own is the
// hold's life after the submit: the budget is corrected when the task
// settles or is refunded, maybe by another node.

// gate is the admission seam the task service shares with the relay.
func (s *Service) gate() admission.Gate {
	return admission.Gate{Billing: s.d.Billing, Limits: s.d.Limits}
}

// correctBudget settles the period budgets of a task whose reservation was
// held at submission: charge is what it finally cost (0 when refunded).
func (s *Service) correctBudget(ctx context.Context, t *Task, charge int64) {
	if s.d.Limits == nil {
		return
	}
	plan := s.d.Limits.For(ratelimit.Subject{UserID: t.UserID, TokenID: t.TokenID, Group: t.Group, Model: t.Model})
	plan.Adjust(ctx, time.UnixMilli(t.CreatedAt), t.QuotaReserved, charge)
}
