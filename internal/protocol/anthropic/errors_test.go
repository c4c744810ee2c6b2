package anthropic

import (
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
		{"bad request", ir.BadRequest("x", "max_tokens: field required"),
			`{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: field required"}}`},
		{"auth", &ir.Error{Status: 401, Kind: ir.KindAuthentication, Message: "invalid x-api-key"},
			`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`},
		{"quota as 402 is billing", &ir.Error{Status: 402, Kind: ir.KindQuota, Message: "out of credit"},
			`{"type":"error","error":{"type":"billing_error","message":"out of credit"}}`},
		{"quota as 429 is rate limit", &ir.Error{Status: 429, Kind: ir.KindQuota, Message: "quota"},
			`{"type":"error","error":{"type":"rate_limit_error","message":"quota"}}`},
		{"upstream trouble", &ir.Error{Status: 502, Kind: ir.KindUpstream, Message: "all channels failed"},
			`{"type":"error","error":{"type":"api_error","message":"all channels failed"}}`},
		{"overloaded", &ir.Error{Status: 529, Kind: ir.KindOverloaded, Message: "Overloaded"},
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		{"timeout", &ir.Error{Status: 504, Kind: ir.KindTimeout, Message: "t"},
			`{"type":"error","error":{"type":"timeout_error","message":"t"}}`},
		{"too large", &ir.Error{Status: 413, Kind: ir.KindRequestTooLarge, Message: "big"},
			`{"type":"error","error":{"type":"request_too_large","message":"big"}}`},
		{"unknown kind falls back to status", &ir.Error{Status: 404, Message: "no such model"},
			`{"type":"error","error":{"type":"not_found_error","message":"no such model"}}`},
		{"empty message gets status text", &ir.Error{Status: 403, Kind: ir.KindPermission},
			`{"type":"error","error":{"type":"permission_error","message":"Forbidden"}}`},
		{"markup is not escaped", &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Message: "<b> & co"},
			`{"type":"error","error":{"type":"invalid_request_error","message":"<b> & co"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(Messages.EncodeError(tt.err)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestDecodeErrorMapsStatusKindAndRetry(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		kind   ir.Kind
		retry  ir.RetryClass
		msg    string
	}{
		{"invalid request", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: field required"}}`, ir.KindInvalidRequest, ir.RetryNever, "messages: field required"},
		{"unprocessable", 422, `{}`, ir.KindInvalidRequest, ir.RetryNever, "upstream error: Unprocessable Entity"},
		{"not found", 404, `{"type":"error","error":{"type":"not_found_error","message":"model: x"}}`, ir.KindNotFound, ir.RetryNever, "model: x"},
		{"too large", 413, `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`, ir.KindRequestTooLarge, ir.RetryNever, "Request exceeds the maximum allowed number of bytes."},
		{"bad key cools the channel", 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, ir.KindAuthentication, ir.RetryNextAndCool, "invalid x-api-key"},
		{"forbidden cools the channel", 403, `{"type":"error","error":{"type":"permission_error","message":"no"}}`, ir.KindPermission, ir.RetryNextAndCool, "no"},
		{"rate limited tries next", 429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, ir.KindRateLimit, ir.RetryNext, "slow down"},
		{"server error tries next", 500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`, ir.KindUpstream, ir.RetryNext, "Internal server error"},
		{"overloaded tries next", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, ir.KindOverloaded, ir.RetryNext, "Overloaded"},
		{"proxy html page", 502, `<html>Bad Gateway</html>`, ir.KindUpstream, ir.RetryNext, "upstream error: Bad Gateway"},
		{"openai-shaped body", 429, `{"error":{"message":"quota","type":"insufficient_quota"}}`, ir.KindRateLimit, ir.RetryNext, "quota"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Messages.DecodeError(tt.status, []byte(tt.body))
			if e.Status != tt.status || e.Kind != tt.kind || e.Retry != tt.retry || e.Message != tt.msg {
				t.Errorf("got status %d kind %s retry %d msg %q; want %d %s %d %q",
					e.Status, e.Kind, e.Retry, e.Message, tt.status, tt.kind, tt.retry, tt.msg)
			}
		})
	}
}

func TestDecodeErrorTruncatesLongMessagesOnARuneBoundary(t *testing.T) {
	long := strings.Repeat("é", 400) // 800 bytes
	e := Messages.DecodeError(400, []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"`+long+`"}}`))
	if len(e.Message) > maxErrorMessage+len("…") || !strings.HasSuffix(e.Message, "…") {
		t.Fatalf("message not truncated: %d bytes", len(e.Message))
	}
	if strings.ContainsRune(e.Message, '\uFFFD') {
		t.Error("truncation split a rune")
	}
}

func TestSniffUsage(t *testing.T) {
	body := []byte(`{"id":"m","usage":{"input_tokens":21,"output_tokens":12,"cache_creation_input_tokens":100,"cache_read_input_tokens":5}}`)
	u, ok := Messages.SniffUsage(body)
	want := ir.Usage{InputTokens: 126, OutputTokens: 12, CacheReadTokens: 5, CacheWriteTokens: 100}
	if !ok || u != want {
		t.Errorf("got %+v %v, want %+v", u, ok, want)
	}
	if _, ok := Messages.SniffUsage([]byte(`{"id":"m"}`)); ok {
		t.Error("usage reported for a body without usage")
	}
}

func TestSniffStreamUsage(t *testing.T) {
	tests := []struct {
		name, event, data string
		ok                bool
		want              ir.Usage
	}{
		{"message_start", "message_start", `{"type":"message_start","message":{"id":"x","usage":{"input_tokens":25,"output_tokens":1,"cache_read_input_tokens":75}}}`,
			true, ir.Usage{InputTokens: 100, OutputTokens: 1, CacheReadTokens: 75}},
		{"message_delta output only", "message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":15}}`,
			true, ir.Usage{OutputTokens: 15}},
		{"text delta", "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\"usage\""}}`, false, ir.Usage{}},
		{"ping", "ping", `{"type":"ping"}`, false, ir.Usage{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, ok := Messages.SniffStreamUsage(tt.event, []byte(tt.data))
			if ok != tt.ok || u != tt.want {
				t.Errorf("got %+v %v, want %+v %v", u, ok, tt.want, tt.ok)
			}
		})
	}
}
