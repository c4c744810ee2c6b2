package ir

import (
	"errors"
	"fmt"
	"time"
)

// RetryClass tells the attempt loop what to do after a failure.
type RetryClass uint8

// Retry classes, decided once where the failure is understood, never by
// matching error strings later.
const (
	// RetryNever: the request itself is wrong; another channel would fail too.
	RetryNever RetryClass = iota
	// RetryNext: this channel failed; another one may succeed.
	RetryNext
	// RetryNextAndCool: this channel is misconfigured (401/403); skip it for
	// a cool-down and try the next.
	RetryNextAndCool
)

// Kind is the client-facing category of an error; each codec renders it in
// its own dialect (type strings, status names).
type Kind string

// Error kinds.
const (
	KindInvalidRequest  Kind = "invalid_request_error"
	KindAuthentication  Kind = "authentication_error"
	KindPermission      Kind = "permission_error"
	KindNotFound        Kind = "not_found_error"
	KindRateLimit       Kind = "rate_limit_error"
	KindQuota           Kind = "insufficient_quota"
	KindRequestTooLarge Kind = "request_too_large"
	KindUpstream        Kind = "upstream_error"
	KindOverloaded      Kind = "overloaded_error"
	KindTimeout         Kind = "timeout_error"
	KindInternal        Kind = "api_error"
)

// Error is the one error type that crosses the gateway boundary. Message is
// safe to show to clients; Cause is for logs and is never rendered.
type Error struct {
	Status  int
	Kind    Kind
	Code    string
	Message string
	Param   string
	// Level names the level of a budget or rate-limit refusal (key,
	// user, team, org); each dialect carries it in its error object.
	Level string
	Retry RetryClass
	Cause error
	// UpstreamStatus is the status the upstream answered with (0 when the
	// failure is the gateway's: a timeout, a reset, a refused conversion);
	// channel health judges it by the channel's policy.
	UpstreamStatus int
	// RetryAfter is the upstream's Retry-After, when it sent one.
	RetryAfter time.Duration
	// SentAt is when the attempt went out, set on a connection lost after
	// it carried the request: calls in flight on one HTTP/2 connection
	// all fail when it goes, and channel health counts that as one failure.
	SentAt time.Time
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s (%d %s): %v", e.Message, e.Status, e.Code, e.Cause)
	}
	return fmt.Sprintf("%s (%d %s)", e.Message, e.Status, e.Code)
}

func (e *Error) Unwrap() error { return e.Cause }

// Errorf builds a client-facing error with a formatted, client-safe message.
func Errorf(status int, kind Kind, code, format string, args ...any) *Error {
	return &Error{Status: status, Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// BadRequest is a 400 for input the client must fix.
func BadRequest(code, format string, args ...any) *Error {
	return Errorf(400, KindInvalidRequest, code, format, args...)
}

// As extracts an *Error from err, or wraps an unknown error as an internal
// failure whose message reveals nothing of the cause.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Status: 500, Kind: KindInternal, Code: "internal_error", Message: "internal error", Cause: err}
}

// KindForStatus is the client-facing kind of an upstream's HTTP status, for
// error answers that carry nothing finer.
func KindForStatus(status int) Kind {
	switch status {
	case 400, 422:
		return KindInvalidRequest
	case 401:
		return KindAuthentication
	case 402:
		return KindQuota
	case 403:
		return KindPermission
	case 404:
		return KindNotFound
	case 408, 504:
		return KindTimeout
	case 413:
		return KindRequestTooLarge
	case 429:
		return KindRateLimit
	case 503:
		return KindOverloaded
	}
	if status >= 500 {
		return KindUpstream
	}
	return KindInvalidRequest
}

// RetryForStatus classifies an upstream's HTTP status: the request is at
// fault (never retry), the channel's credentials or account are (retry
// elsewhere and rest the channel), or the upstream had trouble (retry
// elsewhere).
func RetryForStatus(status int) RetryClass {
	switch {
	case status == 401 || status == 402 || status == 403:
		return RetryNextAndCool
	case status == 408 || status == 409 || status == 429 || status >= 500:
		return RetryNext
	}
	return RetryNever
}
