package cohere

import (
	"net/http"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// maxMessage bounds an upstream message kept for the client.
const maxMessage = 500

// Statuses of the wire beyond the standard ones.
const (
	statusInvalidToken = 498 // the key is invalid or expired
	statusClientClosed = 499
)

// DecodeError reads an error answer, {"id": "...", "message": "..."}.
// Proxies in front of the upstream may answer in other shapes or plain
// text, so the status alone also yields a sensible error.
func (Codec) DecodeError(status int, body []byte) *ir.Error {
	msg := ""
	if gjson.ValidBytes(body) {
		root := gjson.ParseBytes(body)
		msg = root.Get("message").String()
		if msg == "" {
			msg = root.Get("error.message").String()
		}
		if msg == "" && root.Get("error").Type == gjson.String {
			msg = root.Get("error").Str
		}
	}
	return errorFor(status, msg)
}

func errorFor(status int, msg string) *ir.Error {
	if status == statusInvalidToken {
		status = http.StatusUnauthorized
	}
	if status < 400 || status == statusClientClosed {
		status = http.StatusBadGateway
	}
	if msg == "" {
		msg = "upstream error: " + statusText(status)
	}
	return &ir.Error{Status: status, Kind: ir.KindForStatus(status), Code: codeFor(status), Message: truncate(msg), Retry: ir.RetryForStatus(status)}
}

func codeFor(status int) string {
	switch status {
	case 400, 422:
		return "invalid_request"
	case 401:
		return "invalid_api_key"
	case 402:
		return "payment_required"
	case 403:
		return "forbidden"
	case 404:
		return "not_found"
	case 429:
		return "rate_limited"
	}
	return "upstream_error"
}

func statusText(status int) string {
	if t := http.StatusText(status); t != "" {
		return t
	}
	return "error"
}

// truncate cuts s to at most maxMessage bytes without splitting a UTF-8
// sequence.
func truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	n := maxMessage
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
