package admission

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
)

func TestMarshalOtherAppendsDetailInOrderAndNeverOverridesTheSharedKeys(t *testing.T) {
	tests := []struct {
		name   string
		o      Other
		detail map[string]any
		want   string
	}{
		{"no detail", Other{Surface: "openai", GroupRatio: 1}, nil,
			`{"surface":"openai","stream":false,"group_ratio":1}`},
		{"detail sorted after the shape", Other{Surface: "task", GroupRatio: 0.5, Attempts: []Attempt{{ChannelID: 3, Status: 200}}},
			map[string]any{"task_id": "task_x", "action": "generate"},
			`{"surface":"task","stream":false,"group_ratio":0.5,"attempts":[{"channel_id":3,"key_index":0,"status":200,"latency_ms":0}],"action":"generate","task_id":"task_x"}`},
		{"a detail key naming a shared field is dropped", Other{Endpoint: "images", Stream: true, GroupRatio: 1},
			map[string]any{"stream": false, "surface": "spoofed", "images": 2},
			`{"endpoint":"images","stream":true,"group_ratio":1,"images":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MarshalOther(&tt.o, tt.detail)
			if string(got) != tt.want {
				t.Fatalf("other = %s\nwant    %s", got, tt.want)
			}
			var m map[string]any
			if err := json.Unmarshal(got, &m); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
		})
	}
}

func TestRowCarriesTheAccountUsageAndLatency(t *testing.T) {
	start := time.Now().Add(-1500 * time.Millisecond)
	row := Row(Account(&authPrincipal), "m", "req-1", ir.Usage{InputTokens: 7, OutputTokens: 9}, start)
	if row.UserID != 4 || row.TokenID != 5 || row.Model != "m" || row.RequestID != "req-1" ||
		row.PromptTokens != 7 || row.CompletionTokens != 9 || row.LatencyMS < 1500 {
		t.Fatalf("row %+v", row)
	}
	if r := Row(Account(&authPrincipal), "m", "", ir.Usage{}, time.Time{}); r.LatencyMS != 0 {
		t.Fatalf("a row without a start has latency %d", r.LatencyMS)
	}
}

func TestRefusedHeadersOnlyForTrafficControlRefusals(t *testing.T) {
	h := http.Header{}
	RefusedHeaders(h, &ir.Error{Status: 402})
	if len(h) != 0 {
		t.Fatalf("a quota error set %v", h)
	}
	RefusedHeaders(h, &ratelimit.Refused{Err: &ir.Error{Status: 429}, RetryAfter: 2500 * time.Millisecond})
	if h.Get("Retry-After") != "3" {
		t.Fatalf("Retry-After %q, want whole seconds rounded up", h.Get("Retry-After"))
	}
	RefusedHeaders(nil, &ratelimit.Refused{Err: &ir.Error{Status: 429}}) // no header to write: no panic
}
