package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

func TestEncodeErrorRendersTheDialect(t *testing.T) {
	tests := []struct {
		name string
		err  *ir.Error
		want string
	}{
		{"bad request with param and code",
			&ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "invalid_type", Message: "'temperature' must be a number", Param: "temperature"},
			`{"error":{"message":"'temperature' must be a number","type":"invalid_request_error","param":"temperature","code":"invalid_type"}}`},
		{"null param and code",
			&ir.Error{Status: 429, Kind: ir.KindRateLimit, Message: "slow down"},
			`{"error":{"message":"slow down","type":"rate_limit_error","param":null,"code":null}}`},
		{"kind derived from status when missing",
			&ir.Error{Status: 401, Message: "bad key"},
			`{"error":{"message":"bad key","type":"authentication_error","param":null,"code":null}}`},
		{"cause is never rendered",
			&ir.Error{Status: 500, Kind: ir.KindInternal, Code: "internal_error", Message: "internal error", Cause: errString("dsn=postgres://secret")},
			`{"error":{"message":"internal error","type":"api_error","param":null,"code":"internal_error"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(Chat.EncodeError(tt.err))
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if !json.Valid([]byte(got)) {
				t.Error("not valid JSON")
			}
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func TestDecodeErrorMapsStatusAndKeepsMessage(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		kind    ir.Kind
		retry   ir.RetryClass
		message string
		code    string
	}{
		{"bad request", 400, `{"error":{"message":"Invalid 'messages'","type":"invalid_request_error","param":"messages","code":null}}`,
			ir.KindInvalidRequest, ir.RetryNever, "Invalid 'messages'", ""},
		{"unprocessable", 422, `{"detail":"field required"}`, ir.KindInvalidRequest, ir.RetryNever, "field required", ""},
		{"unknown model on this channel", 404, `{"error":{"message":"The model 'gpt-9' does not exist","type":"invalid_request_error","code":"model_not_found"}}`,
			ir.KindNotFound, ir.RetryNext, "gpt-9", "model_not_found"},
		{"plain 404", 404, `{"error":{"message":"Unknown path"}}`, ir.KindNotFound, ir.RetryNever, "Unknown path", ""},
		{"bad key", 401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`,
			ir.KindAuthentication, ir.RetryNextAndCool, "Incorrect API key", "invalid_api_key"},
		{"forbidden", 403, `{"error":{"message":"region not supported"}}`, ir.KindPermission, ir.RetryNextAndCool, "region", ""},
		{"rate limited", 429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`,
			ir.KindRateLimit, ir.RetryNext, "Rate limit", "rate_limit_exceeded"},
		{"quota exhausted", 429, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`,
			ir.KindQuota, ir.RetryNext, "quota", "insufficient_quota"},
		{"timeout", 408, ``, ir.KindTimeout, ir.RetryNext, "status 408", ""},
		{"server error as plain text", 500, "upstream connect error", ir.KindUpstream, ir.RetryNext, "upstream connect error", ""},
		{"overloaded with an HTML page", 503, "<html><body>503</body></html>", ir.KindOverloaded, ir.RetryNext, "status 503", ""},
		{"numeric code from a compatible server", 400, `{"object":"error","message":"bad","type":"BadRequestError","code":400}`,
			ir.KindInvalidRequest, ir.RetryNever, "bad", "400"},
		{"error as a string", 502, `{"error":"bad gateway"}`, ir.KindUpstream, ir.RetryNext, "bad gateway", ""},
		{"array-wrapped error", 400, `[{"error":{"message":"wrapped"}}]`, ir.KindInvalidRequest, ir.RetryNever, "wrapped", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Chat.DecodeError(tt.status, []byte(tt.body))
			if e.Status != tt.status || e.Kind != tt.kind || e.Retry != tt.retry || e.Code != tt.code {
				t.Errorf("got status %d kind %s retry %d code %q; want %d %s %d %q", e.Status, e.Kind, e.Retry, e.Code, tt.status, tt.kind, tt.retry, tt.code)
			}
			if !strings.Contains(e.Message, tt.message) {
				t.Errorf("message %q lacks %q", e.Message, tt.message)
			}
		})
	}
}

func TestDecodeErrorTruncatesLongMessagesOnRuneBoundaries(t *testing.T) {
	long := strings.Repeat("é", 400) // 800 bytes
	e := Chat.DecodeError(400, []byte(`{"error":{"message":"`+long+`"}}`))
	if len(e.Message) > maxErrorMessage+len("…") {
		t.Errorf("message is %d bytes", len(e.Message))
	}
	if !strings.HasSuffix(e.Message, "…") || strings.ContainsRune(e.Message, '\uFFFD') {
		t.Errorf("bad truncation: %q", e.Message[len(e.Message)-10:])
	}
}

func TestModelNotFoundRendersTheDocumentedCode(t *testing.T) {
	body := Chat.EncodeError(ModelNotFound("gpt-unknown"))
	var env struct {
		Error struct{ Message, Type, Code string }
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatal(err)
	}
	if env.Error.Code != "model_not_found" || !strings.Contains(env.Error.Message, "gpt-unknown") {
		t.Errorf("got %s", body)
	}
	if e := ModelNotFound("x"); e.Status != 404 {
		t.Errorf("status %d", e.Status)
	}
}
