package anthropic

import (
	"net/http"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// maxErrorMessage bounds an upstream message kept for the client.
const maxErrorMessage = 500

type wireError struct {
	Type  string        `json:"type"`
	Error wireErrorBody `json:"error"`
}

type wireErrorBody struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	// Level names the level of a budget or rate-limit refusal.
	Level string `json:"level,omitempty"`
}

// EncodeError renders {"type":"error","error":{"type","message"}}. The same
// bytes serve as the data of an "error" stream event. Quota exhaustion is a
// billing_error when answered with 402 and a rate_limit_error otherwise: the
// official clients pick their exception class from the status, and with 429
// they raise their rate-limit error, which carries the same meaning.
func (Codec) EncodeError(e *ir.Error) []byte {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	if msg == "" {
		msg = "error"
	}
	b, err := marshal(wireError{Type: "error", Error: wireErrorBody{Type: errorType(e), Message: msg, Level: e.Level}})
	if err != nil { // only strings are encoded; this cannot fail
		return []byte(`{"type":"error","error":{"type":"api_error","message":"internal error"}}`)
	}
	return b
}

func errorType(e *ir.Error) string {
	switch e.Kind {
	case ir.KindInvalidRequest:
		return "invalid_request_error"
	case ir.KindAuthentication:
		return "authentication_error"
	case ir.KindPermission:
		return "permission_error"
	case ir.KindNotFound:
		return "not_found_error"
	case ir.KindRateLimit:
		return "rate_limit_error"
	case ir.KindQuota:
		if e.Status == http.StatusPaymentRequired {
			return "billing_error"
		}
		return "rate_limit_error"
	case ir.KindRequestTooLarge:
		return "request_too_large"
	case ir.KindOverloaded:
		return "overloaded_error"
	case ir.KindTimeout:
		return "timeout_error"
	case ir.KindUpstream, ir.KindInternal:
		return "api_error"
	}
	return typeForStatus(e.Status)
}

func typeForStatus(status int) string {
	switch status {
	case 400, 422:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 402:
		return "billing_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 504:
		return "timeout_error"
	case 529, 503:
		return "overloaded_error"
	}
	return "api_error"
}

// wireTypes maps the dialect's error types to IR kinds and the status the
// upstream documents for them (used when a type arrives without a status, as
// in a stream's error event).
var wireTypes = map[string]struct {
	kind   ir.Kind
	status int
}{
	"invalid_request_error": {ir.KindInvalidRequest, 400},
	"authentication_error":  {ir.KindAuthentication, 401},
	"billing_error":         {ir.KindQuota, 402},
	"permission_error":      {ir.KindPermission, 403},
	"not_found_error":       {ir.KindNotFound, 404},
	"request_too_large":     {ir.KindRequestTooLarge, 413},
	"rate_limit_error":      {ir.KindRateLimit, 429},
	"api_error":             {ir.KindUpstream, 500},
	"timeout_error":         {ir.KindTimeout, 504},
	"overloaded_error":      {ir.KindOverloaded, 529},
}

// DecodeError reads an upstream error answer. The body is usually the
// dialect's envelope; proxies in front of the upstream may answer in other
// shapes or plain text, so the status alone must also yield a sensible error.
func (Codec) DecodeError(status int, body []byte) *ir.Error {
	var root gjson.Result
	if gjson.ValidBytes(body) {
		root = gjson.ParseBytes(body)
	}
	return errorFromBody(status, root)
}

func errorFromBody(status int, root gjson.Result) *ir.Error {
	typ := root.Get("error.type").String()
	msg := root.Get("error.message").String()
	if msg == "" {
		msg = root.Get("message").String()
	}
	known, ok := wireTypes[typ]
	if status < 400 {
		status = 502
		if ok {
			status = known.status
		}
	}
	kind := known.kind
	if !ok {
		kind = wireTypes[typeForStatus(status)].kind
	}
	if msg == "" {
		msg = "upstream error: " + http.StatusText(status)
	}
	return &ir.Error{
		Status: status, Kind: kind, Code: typ, Message: truncate(msg, maxErrorMessage),
		Retry: ir.RetryForStatus(status),
	}
}

// upstreamMalformed reports an upstream answer this codec cannot read.
func upstreamMalformed(msg string) *ir.Error {
	return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "bad_upstream_response", Message: msg, Retry: ir.RetryNext}
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
