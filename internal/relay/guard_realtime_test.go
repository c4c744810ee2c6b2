package relay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
)

const rtCardItem = `{"type":"conversation.item.create","event_id":"ev_9","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"my card is 4111 1111 1111 1111"}]}}`

func TestGuardrailOnRealtimeClientFrames(t *testing.T) {
	for _, action := range []string{"block", "redact"} {
		t.Run(action, func(t *testing.T) {
			e := newEnv(t)
			f := &fakeRealtime{}
			e.realtimeChannel(f)
			e.guardrails(guardrail.Spec{Name: "no-cards", Type: guardrail.TypePII, Config: json.RawMessage(`{"action":"` + action + `"}`)})
			c, _, err := e.dialRealtime("gpt-4o-mini", bearer(testKey))
			if err != nil {
				t.Fatal(err)
			}
			write(t, c, websocket.MessageText, rtCardItem)
			if action == "block" {
				got := readText(t, c)
				if gjson.Get(got, "type").Str != "error" || gjson.Get(got, "error.code").Str != "guardrail_blocked" ||
					gjson.Get(got, "error.event_id").Str != "ev_9" || strings.Contains(got, "4111") {
					t.Fatalf("error event %s", got)
				}
			}
			write(t, c, websocket.MessageText, "bill")
			if got := readText(t, c); !strings.Contains(got, `"response.done"`) {
				t.Fatalf("frame %q", got)
			}
			_ = c.Close(websocket.StatusNormalClosure, "")
			e.endRealtime()
			seen := strings.Join(f.received(), "\n")
			if strings.Contains(seen, "4111") {
				t.Fatalf("the upstream got the card: %s", seen)
			}
			if (action == "redact") != strings.Contains(seen, "[REDACTED:card]") {
				t.Fatalf("upstream frames %s", seen)
			}
			row, _ := e.lastConsume()
			if recs := guardOther(t, row.Other); len(recs) != 1 || recs[0].Action != action || recs[0].Matches["card"] != 1 {
				t.Fatalf("row other %s", row.Other)
			}
		})
	}
}
