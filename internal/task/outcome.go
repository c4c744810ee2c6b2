package task

import (
	"fmt"
	"net/http"
)

// pollOutcome is what the host does with one poll of one task (SPEC §3 and
// PLUGIN-CONTEXT "Polling outcomes").
type pollOutcome int

const (
	// outcomeProgress: a valid non-terminal answer; the failure count
	// resets and the snapshot is written.
	outcomeProgress pollOutcome = iota
	// outcomeTerminal: SUCCESS or FAILURE from the plugin's parse.
	outcomeTerminal
	// outcomeCounted: status unchanged, one more consecutive failure.
	outcomeCounted
	// outcomeGone: the upstream no longer knows the task → FAILURE, refund.
	outcomeGone
)

func (o pollOutcome) String() string {
	return [...]string{"progress", "terminal", "counted", "gone"}[o]
}

// pollHTTP classifies an upstream query answer before any parsing. parse
// reports whether the body goes to the plugin: every 2xx, and 4xx other
// than the ones the host decides itself.
func pollHTTP(status int) (o pollOutcome, parse bool, reason string) {
	switch {
	case status/100 == 2:
		return outcomeProgress, true, ""
	case status == http.StatusNotFound || status == http.StatusGone:
		return outcomeGone, false, fmt.Sprintf("the upstream no longer knows the task (HTTP %d)", status)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return outcomeCounted, false, fmt.Sprintf("the upstream refused the channel's credentials (HTTP %d)", status)
	case status == http.StatusTooManyRequests || status >= 500:
		return outcomeCounted, false, fmt.Sprintf("the upstream is unavailable (HTTP %d)", status)
	case status/100 == 4:
		return outcomeProgress, true, ""
	}
	return outcomeCounted, false, fmt.Sprintf("unexpected upstream answer (HTTP %d)", status)
}

// pollParsed classifies a parsed answer. A hook error, UNKNOWN, an empty or
// unrecognised status never count as progress; a non-2xx answer whose
// parse is still non-terminal counts as a failure.
func pollParsed(status int, r pollResult, hookErr error) (pollOutcome, string) {
	if hookErr != nil {
		return outcomeCounted, "the plugin could not read the upstream answer"
	}
	if terminal(r.status) {
		return outcomeTerminal, ""
	}
	if !progressing(r.status) {
		return outcomeCounted, "the upstream reported an unknown task status"
	}
	if status/100 != 2 {
		return outcomeCounted, fmt.Sprintf("the upstream answered HTTP %d", status)
	}
	return outcomeProgress, ""
}
