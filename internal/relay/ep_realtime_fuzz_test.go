package relay

import (
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// FuzzRealtimeFrame feeds upstream frames to the usage reader and close
// reasons to the truncation that forwards them.
func FuzzRealtimeFrame(f *testing.F) {
	f.Add([]byte(realtimeDone), "upstream says bye")
	f.Add([]byte(`{"type":"response.done","response":{"usage":{"input_tokens":-4,"output_tokens":1e400,"input_token_details":{"cached_tokens":9}}}}`), "é"+string(make([]byte, 130)))
	f.Fuzz(func(t *testing.T, frame []byte, reason string) {
		u, _ := realtimeUsage(gjson.ParseBytes(frame).Get("response.usage"))
		if u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens > u.InputTokens {
			t.Fatalf("impossible usage %+v from %s", u, frame)
		}
		r := truncateReason(reason)
		if len(r) > 123 || (utf8.ValidString(reason) && !utf8.ValidString(r)) {
			t.Fatalf("reason %q truncated to %q", reason, r)
		}
	})
}
