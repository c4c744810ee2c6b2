package bedrock

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// maxErrorMessage bounds an upstream message kept for the client.
const maxErrorMessage = 500

// errorTypes maps the exception names Bedrock answers with (in the
// x-amzn-ErrorType header, the body's __type, or a stream's
// :exception-type) to the IR kind and the status the gateway gives them.
var errorTypes = map[string]struct {
	kind   ir.Kind
	status int
}{
	"ValidationException":                 {ir.KindInvalidRequest, 400},
	"SerializationException":              {ir.KindInvalidRequest, 400},
	"UnrecognizedClientException":         {ir.KindAuthentication, 401},
	"MissingAuthenticationTokenException": {ir.KindAuthentication, 401},
	"InvalidSignatureException":           {ir.KindAuthentication, 403},
	"IncompleteSignatureException":        {ir.KindAuthentication, 403},
	"ExpiredTokenException":               {ir.KindAuthentication, 403},
	"AccessDeniedException":               {ir.KindPermission, 403},
	"ResourceNotFoundException":           {ir.KindNotFound, 404},
	"ThrottlingException":                 {ir.KindRateLimit, 429},
	"ServiceQuotaExceededException":       {ir.KindRateLimit, 429},
	"TooManyRequestsException":            {ir.KindRateLimit, 429},
	"InternalServerException":             {ir.KindUpstream, 500},
	"ModelErrorException":                 {ir.KindUpstream, 502},
	"ModelStreamErrorException":           {ir.KindUpstream, 502},
	"ModelNotReadyException":              {ir.KindOverloaded, 503},
	"ServiceUnavailableException":         {ir.KindOverloaded, 503},
	"ModelTimeoutException":               {ir.KindTimeout, 504},
}

// credentialTypes are refusals whose AWS message may quote the canonical
// request, session token included; their text is never passed on.
var credentialTypes = map[string]bool{
	"UnrecognizedClientException": true, "MissingAuthenticationTokenException": true,
	"InvalidSignatureException": true, "IncompleteSignatureException": true, "ExpiredTokenException": true,
}

// DecodeError reads an error answer by its body alone: {"message": "..."}
// with the exception name, when present, in __type.
func (Codec) DecodeError(status int, body []byte) *ir.Error {
	return ErrorOf(status, "", body)
}

// ErrorOf reads an error answer: errType is the x-amzn-ErrorType header
// (empty when absent), body the answer. The exception name decides kind
// and status; an unknown one keeps the answer's status.
func ErrorOf(status int, errType string, body []byte) *ir.Error {
	var root gjson.Result
	if gjson.ValidBytes(body) {
		root = gjson.ParseBytes(body)
	}
	if errType == "" {
		errType = root.Get("__type").String()
	}
	msg := root.Get("message").String()
	if msg == "" {
		msg = root.Get("Message").String()
	}
	return errorFor(status, errType, msg)
}

// Exception is the error a stream's exception frame carries: its
// :exception-type and JSON payload.
func Exception(errType string, payload []byte) *ir.Error {
	msg := ""
	if gjson.ValidBytes(payload) {
		msg = gjson.GetBytes(payload, "message").String()
		if msg == "" {
			msg = gjson.GetBytes(payload, "Message").String()
		}
	}
	return errorFor(0, errType, msg)
}

func errorFor(status int, errType, msg string) *ir.Error {
	name := exceptionName(errType)
	known, ok := errorTypes[name]
	switch {
	case ok:
		status = known.status
	case status < 400:
		status = 502
	}
	kind := known.kind
	if !ok {
		kind = ir.KindForStatus(status)
	}
	switch {
	case credentialTypes[name]:
		msg = "Amazon Bedrock refused the channel's credentials (" + name + ")"
	case quotesSignature(msg):
		msg = "Amazon Bedrock refused the request's signature"
	case msg == "":
		msg = "upstream error: " + http.StatusText(status)
		if name != "" {
			msg = "Amazon Bedrock answered " + name
		}
	}
	return &ir.Error{Status: status, Kind: kind, Code: name, Message: truncate(msg, maxErrorMessage), Retry: ir.RetryForStatus(status)}
}

// quotesSignature reports a message that quotes what was signed (AWS's
// signature-mismatch text shows the canonical request, session token
// included), for answers read without their exception name.
func quotesSignature(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "canonical string") || strings.Contains(m, "string-to-sign") || strings.Contains(m, "x-amz-security-token")
}

// exceptionName strips what AWS puts around an exception's name (a
// namespace before '#', as in com.amazon.coral.validate#ValidationException,
// and a URL after ':' in the x-amzn-ErrorType header) and capitalises it.
func exceptionName(t string) string {
	t = strings.TrimSpace(t)
	if i := strings.LastIndexByte(t, '#'); i >= 0 {
		t = t[i+1:]
	}
	if i := strings.IndexByte(t, ':'); i >= 0 {
		t = t[:i]
	}
	if len(t) > 100 {
		t = t[:100]
	}
	// Stream exceptions are named in lower camel case (throttlingException).
	if t != "" && t[0] >= 'a' && t[0] <= 'z' {
		t = string(t[0]-'a'+'A') + t[1:]
	}
	return t
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
