package gemini

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// maxMessage bounds an upstream message kept for the client.
const maxMessage = 500

// EncodeError renders {"error":{"code","message","status"}}.
func (Codec) EncodeError(e *ir.Error) []byte {
	status := e.Status
	if status == 0 {
		status = statusForKind(e.Kind)
	}
	msg := ownFieldNames(e.Param, e.Message)
	if msg == "" {
		msg = statusText(status)
	}
	b, _ := json.Marshal(errorEnvelope{Error: &errorDetail{Code: status, Message: msg, Status: rpcStatus(status), Level: e.Level}})
	return b
}

// ownFields maps IR parameter names to the request field this format's
// clients actually sent, so a refusal names what the client can change.
var ownFields = map[string]string{"n": "generationConfig.candidateCount"}

// ownFieldNames rewrites a message about an IR parameter to name this
// format's field: the leading parameter name is replaced, or the field is
// put in front when the message does not start with it.
func ownFieldNames(param, msg string) string {
	field, ok := ownFields[param]
	if !ok || msg == "" {
		return msg
	}
	if rest, found := strings.CutPrefix(msg, param); found && rest != "" && !isIdentByte(rest[0]) {
		return field + rest
	}
	return field + ": " + msg
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// rpcStatus names an HTTP status the way this format's errors do.
func rpcStatus(status int) string {
	switch status {
	case 400, 413, 422:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 402, 429:
		return "RESOURCE_EXHAUSTED"
	case 502, 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if status >= 400 && status < 500 {
		return "FAILED_PRECONDITION"
	}
	return "INTERNAL"
}

func statusForKind(k ir.Kind) int {
	switch k {
	case ir.KindInvalidRequest:
		return 400
	case ir.KindAuthentication:
		return 401
	case ir.KindPermission:
		return 403
	case ir.KindNotFound:
		return 404
	case ir.KindRateLimit, ir.KindQuota:
		return 429
	case ir.KindRequestTooLarge:
		return 413
	case ir.KindUpstream:
		return 502
	case ir.KindOverloaded:
		return 503
	case ir.KindTimeout:
		return 504
	}
	return 500
}

// DecodeError reads an upstream error answer. The body may also be the
// one-element array the non-SSE stream uses.
func (Codec) DecodeError(status int, body []byte) *ir.Error {
	var env errorEnvelope
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var arr []errorEnvelope
		if json.Unmarshal(trimmed, &arr) == nil && len(arr) > 0 {
			env = arr[0]
		}
	} else {
		_ = json.Unmarshal(trimmed, &env)
	}
	if env.Error == nil {
		env.Error = &errorDetail{}
	}
	return errorFromDetail(status, env.Error)
}

// errorFromDetail classifies an upstream error. A rejected API key arrives as
// a 400 with reason API_KEY_INVALID; it is the channel's fault, so it is
// treated as an authentication failure that cools the channel.
func errorFromDetail(status int, d *errorDetail) *ir.Error {
	if status == 0 {
		status = d.Code
	}
	if status < 400 {
		status = 502
	}
	e := &ir.Error{Status: status, Code: d.Status, Message: truncate(d.Message)}
	if e.Message == "" {
		e.Message = statusText(status)
	}
	switch {
	case keyInvalid(d.Details):
		e.Status, e.Kind, e.Retry = 401, ir.KindAuthentication, ir.RetryNextAndCool
	case d.Status == "FAILED_PRECONDITION":
		// For example an unsupported region: another channel may work.
		e.Kind, e.Retry = ir.KindPermission, ir.RetryNext
	default:
		e.Kind, e.Retry = ir.KindForStatus(status), ir.RetryForStatus(status)
	}
	if e.Code == "" {
		e.Code = rpcStatus(e.Status)
	}
	return e
}

func keyInvalid(details []json.RawMessage) bool {
	for _, raw := range details {
		var d struct {
			Reason string `json:"reason"`
		}
		if json.Unmarshal(raw, &d) == nil && d.Reason == "API_KEY_INVALID" {
			return true
		}
	}
	return false
}

func truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func statusText(status int) string {
	if t := http.StatusText(status); t != "" {
		return t
	}
	return "upstream error"
}
