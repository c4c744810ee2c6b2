package gemini

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

func TestEncodeErrorRendersTheDialect(t *testing.T) {
	tests := []struct {
		name       string
		err        *ir.Error
		wantCode   int
		wantStatus string
	}{
		{"bad request", ir.BadRequest("x", "contents is required"), 400, "INVALID_ARGUMENT"},
		{"missing key", &ir.Error{Status: 401, Kind: ir.KindAuthentication, Message: "no key"}, 401, "UNAUTHENTICATED"},
		{"model not allowed", &ir.Error{Status: 403, Kind: ir.KindPermission, Message: "no"}, 403, "PERMISSION_DENIED"},
		{"unknown model", &ir.Error{Status: 404, Kind: ir.KindNotFound, Message: "no"}, 404, "NOT_FOUND"},
		{"out of quota", &ir.Error{Status: 402, Kind: ir.KindQuota, Message: "no"}, 402, "RESOURCE_EXHAUSTED"},
		{"rate limited", &ir.Error{Status: 429, Kind: ir.KindRateLimit, Message: "slow"}, 429, "RESOURCE_EXHAUSTED"},
		{"upstream failed", &ir.Error{Status: 502, Kind: ir.KindUpstream, Message: "bad"}, 502, "UNAVAILABLE"},
		{"upstream timed out", &ir.Error{Status: 504, Kind: ir.KindTimeout, Message: "late"}, 504, "DEADLINE_EXCEEDED"},
		{"status taken from the kind when missing", &ir.Error{Kind: ir.KindOverloaded, Message: "busy"}, 503, "UNAVAILABLE"},
		{"internal", ir.As(errTest("boom")), 500, "INTERNAL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
					Status  string `json:"status"`
				} `json:"error"`
			}
			out := Generate.EncodeError(tt.err)
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if got.Error.Code != tt.wantCode || got.Error.Status != tt.wantStatus || got.Error.Message == "" {
				t.Errorf("got %s", out)
			}
			if strings.Contains(string(out), "boom") {
				t.Errorf("cause leaked: %s", out)
			}
		})
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }

func TestDecodeErrorClassifiesRetries(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		body       string
		wantStatus int
		wantKind   ir.Kind
		wantRetry  ir.RetryClass
		wantMsg    string
	}{
		{"bad argument is never retried", 400, `{"error":{"code":400,"message":"Invalid value at 'contents'","status":"INVALID_ARGUMENT"}}`,
			400, ir.KindInvalidRequest, ir.RetryNever, "Invalid value at 'contents'"},
		{"rejected API key cools the channel", 400, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}`,
			401, ir.KindAuthentication, ir.RetryNextAndCool, "API key not valid. Please pass a valid API key."},
		{"unsupported region tries the next channel", 400, `{"error":{"code":400,"message":"User location is not supported for the API use.","status":"FAILED_PRECONDITION"}}`,
			400, ir.KindPermission, ir.RetryNext, "User location is not supported for the API use."},
		{"permission denied cools the channel", 403, `{"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}`,
			403, ir.KindPermission, ir.RetryNextAndCool, "denied"},
		{"unknown model is never retried", 404, `{"error":{"code":404,"message":"models/x is not found","status":"NOT_FOUND"}}`,
			404, ir.KindNotFound, ir.RetryNever, "models/x is not found"},
		{"quota exhaustion tries the next channel", 429, `{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}`,
			429, ir.KindRateLimit, ir.RetryNext, "Resource has been exhausted"},
		{"overload tries the next channel", 503, `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`,
			503, ir.KindOverloaded, ir.RetryNext, "The model is overloaded."},
		{"array-wrapped error from the JSON stream", 500, `[{"error":{"code":500,"message":"internal","status":"INTERNAL"}}]`,
			500, ir.KindUpstream, ir.RetryNext, "internal"},
		{"body that is not JSON keeps the status", 502, `<html>bad gateway</html>`,
			502, ir.KindUpstream, ir.RetryNext, "Bad Gateway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Generate.DecodeError(tt.status, []byte(tt.body))
			if e.Status != tt.wantStatus || e.Kind != tt.wantKind || e.Retry != tt.wantRetry || e.Message != tt.wantMsg {
				t.Errorf("got %d %s retry=%d %q", e.Status, e.Kind, e.Retry, e.Message)
			}
		})
	}
}

func TestDecodeErrorTruncatesLongMessagesOnARuneBoundary(t *testing.T) {
	long := strings.Repeat("é", 400)
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"code": 400, "message": long}})
	e := Generate.DecodeError(400, body)
	if len(e.Message) > maxMessage+len("…") || !strings.HasSuffix(e.Message, "…") {
		t.Errorf("message not truncated: %d bytes", len(e.Message))
	}
	if !json.Valid([]byte(`"` + e.Message + `"`)) {
		t.Error("truncation split a rune")
	}
}
