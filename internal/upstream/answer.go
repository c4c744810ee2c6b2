package upstream

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// AnswerError reads a non-2xx answer into the provider's error
// (DecodeAnswer). The body is read (bounded), not closed.
func AnswerError(a Adapter, t Target, resp *http.Response) *ir.Error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return DecodeAnswer(a, t, resp.StatusCode, resp.Header, body)
}

// DecodeAnswer is the provider's error in a non-2xx answer: read by the
// adapter when it decodes its provider's errors itself (ErrorDecoder),
// else by its chat wire's codec. UpstreamStatus and RetryAfter are set
// from the answer, so channel health judges it under the channel's policy
// (routing.Health.Report) exactly as it judges a live attempt.
func DecodeAnswer(a Adapter, t Target, status int, h http.Header, body []byte) *ir.Error {
	var e *ir.Error
	if d, ok := a.(ErrorDecoder); ok {
		e = d.DecodeError(status, h, body)
	} else if a != nil {
		e = a.Codec(t).DecodeError(status, body)
	}
	return StatusError(status, h, e)
}

// StatusError completes e, the decoded error of an upstream answer with
// status (nil when it could not be decoded), with what channel health
// judges: the upstream's status and its Retry-After.
func StatusError(status int, h http.Header, e *ir.Error) *ir.Error {
	if e == nil {
		e = &ir.Error{Status: status, Kind: ir.KindUpstream, Code: "upstream_error", Message: http.StatusText(status)}
	}
	e.UpstreamStatus = status
	e.RetryAfter = RetryAfter(h.Get("Retry-After"), time.Now())
	return e
}

// RetryAfter reads a Retry-After header: seconds or an HTTP date.
func RetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n > 0 && n < 1e7 {
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// Unreachable is a request that got no answer (refused, reset, timed
// out): the channel's failure, counted towards cooling, and another
// channel may serve. The URL is dropped from the cause, since a query
// may carry a credential on some providers.
//
// The gateway's own shortage (no descriptor, no port) is Shortage's 503
// instead: not the channel's failure.
func Unreachable(err error) *ir.Error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if short := Shortage(err); short != nil {
		return short
	}
	msg := "the upstream could not be reached"
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		msg = "the upstream did not answer in time"
	}
	return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "upstream_unreachable", Message: msg,
		Retry: ir.RetryNext, Cause: err}
}
