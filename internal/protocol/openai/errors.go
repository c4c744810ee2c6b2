package openai

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// maxErrorMessage bounds an upstream message relayed to the client.
const maxErrorMessage = 500

// encodeError renders the OpenAI error envelope; param and code are null
// when unset, as the API does.
func encodeError(e *ir.Error) []byte {
	if e == nil {
		e = ir.As(nil)
	}
	kind := e.Kind
	if kind == "" {
		kind = kindForStatus(e.Status, "")
	}
	msg := e.Message
	if msg == "" {
		msg = "request failed"
	}
	buf := make([]byte, 0, 96+len(msg))
	buf = append(buf, `{"error":{"message":`...)
	buf = appendString(buf, msg)
	buf = append(buf, `,"type":`...)
	buf = appendString(buf, string(kind))
	buf = append(buf, `,"param":`...)
	buf = appendStringOrNull(buf, e.Param)
	buf = append(buf, `,"code":`...)
	buf = appendStringOrNull(buf, e.Code)
	if e.Level != "" {
		buf = append(buf, `,"level":`...)
		buf = appendString(buf, e.Level)
	}
	return append(buf, "}}"...)
}

func appendStringOrNull(buf []byte, s string) []byte {
	if s == "" {
		return append(buf, "null"...)
	}
	return appendString(buf, s)
}

// decodeError reads an upstream error: the OpenAI envelope, the bare
// {"message"} or {"error":"text"} forms compatible servers use, or plain text.
func decodeError(status int, body []byte) *ir.Error {
	msg, typ, code, param := errorFields(body)
	if msg == "" {
		msg = "the upstream answered with status " + strconv.Itoa(status)
	}
	e := &ir.Error{
		Status:  status,
		Kind:    kindForStatus(status, typ+" "+code),
		Code:    code,
		Message: truncate(msg, maxErrorMessage),
		Param:   param,
		Retry:   retryForStatus(status, typ, code, msg),
	}
	return e
}

func errorFields(body []byte) (msg, typ, code, param string) {
	trimmed := bytes.TrimSpace(body)
	if !gjson.ValidBytes(trimmed) {
		// An HTML page from a proxy in front of the upstream says nothing
		// useful to the client; the status-based message says more.
		if bytes.HasPrefix(trimmed, []byte("<")) {
			return "", "", "", ""
		}
		return string(trimmed), "", "", ""
	}
	root := gjson.ParseBytes(trimmed)
	if root.IsArray() {
		root = root.Get("0")
	}
	obj := root
	if e := root.Get("error"); e.IsObject() {
		obj = e
	} else if e.Type == gjson.String {
		return e.Str, "", "", ""
	}
	msg = obj.Get("message").String()
	if msg == "" {
		// FastAPI-based servers put the reason in detail.
		msg = obj.Get("detail").String()
	}
	if msg == "" && !obj.IsObject() {
		msg = string(trimmed)
	}
	// code is a string in the API and a number in some compatible servers.
	return msg, obj.Get("type").String(), obj.Get("code").String(), obj.Get("param").String()
}

// kindForStatus picks the client-facing kind. hint holds the upstream's type
// and code, which separate an exhausted quota from a rate limit.
func kindForStatus(status int, hint string) ir.Kind {
	switch {
	case status == 400 || status == 422:
		return ir.KindInvalidRequest
	case status == 401:
		return ir.KindAuthentication
	case status == 402:
		return ir.KindQuota
	case status == 403:
		return ir.KindPermission
	case status == 404:
		return ir.KindNotFound
	case status == 408 || status == 504:
		return ir.KindTimeout
	case status == 413:
		return ir.KindRequestTooLarge
	case status == 429 && strings.Contains(hint, "insufficient_quota"):
		return ir.KindQuota
	case status == 429:
		return ir.KindRateLimit
	case status == 503 || status == 529:
		return ir.KindOverloaded
	case status >= 400 && status < 500:
		return ir.KindInvalidRequest
	}
	return ir.KindUpstream
}

// retryForStatus decides what the attempt loop does next. A 404 for an
// unknown model means this channel lacks the model, not that the request is
// wrong, so another channel may serve it.
func retryForStatus(status int, typ, code, msg string) ir.RetryClass {
	switch {
	case status == 401 || status == 403 || status == 402:
		return ir.RetryNextAndCool
	case status == 404 && isModelNotFound(typ, code, msg):
		return ir.RetryNext
	case status == 408 || status == 429 || status >= 500:
		return ir.RetryNext
	case status >= 400:
		return ir.RetryNever
	}
	// Anything else is not an error status at all: the channel misbehaved.
	return ir.RetryNext
}

func isModelNotFound(typ, code, msg string) bool {
	if code == "model_not_found" || typ == "model_not_found" {
		return true
	}
	low := strings.ToLower(msg)
	return strings.Contains(low, "model") &&
		(strings.Contains(low, "not found") || strings.Contains(low, "does not exist") || strings.Contains(low, "not exist"))
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
