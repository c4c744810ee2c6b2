package task

import (
	"github.com/turnpike-gw/turnpike/internal/admission"
)

// Task submissions are requests of a key like any other (CONTRACT §10):
// they pass the admission seam chat calls pass (admission.Gate), counting
// against the key's rate limits while the submit runs and holding their
// reservation against its period budgets. What is the task's own is the
// hold's life after the submit: the ticket is kept with the task row, and
// restored and ended when the task settles or is refunded, maybe by another
// node (ticketOf).

// gate is the admission seam the task service shares with the relay.
func (s *Service) gate() admission.Gate {
	return admission.Gate{Billing: s.d.Billing, Limits: s.d.Limits, Plans: s.d.Plans}
}
