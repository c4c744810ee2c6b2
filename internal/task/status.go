package task

import (
	"strings"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// The seven task statuses of SPEC §3.
const (
	StatusNotStart   = "NOT_START"
	StatusSubmitted  = "SUBMITTED"
	StatusQueued     = "QUEUED"
	StatusInProgress = "IN_PROGRESS"
	StatusSuccess    = store.TaskSuccess
	StatusFailure    = store.TaskFailure
	StatusUnknown    = "UNKNOWN"
)

// Billing states of a task's reservation.
const (
	BillingNone     = "none"
	BillingHeld     = store.TaskBillingHeld
	BillingSettled  = "settled"
	BillingRefunded = "refunded"
)

var knownStatuses = []string{StatusNotStart, StatusSubmitted, StatusQueued, StatusInProgress,
	StatusSuccess, StatusFailure, StatusUnknown}

// normalizeStatus maps what a hook returned onto the seven statuses. Anything
// unrecognised becomes UNKNOWN, never a guess at progress.
func normalizeStatus(v any) string {
	s, _ := v.(string)
	s = strings.ToUpper(strings.TrimSpace(s))
	for _, k := range knownStatuses {
		if s == k {
			return k
		}
	}
	return StatusUnknown
}

// terminal reports whether a status ends the task.
func terminal(status string) bool { return status == StatusSuccess || status == StatusFailure }

// progressing reports whether a polled status is a valid non-terminal answer
// that proves the upstream still knows the task.
func progressing(status string) bool {
	switch status {
	case StatusNotStart, StatusSubmitted, StatusQueued, StatusInProgress:
		return true
	}
	return false
}
