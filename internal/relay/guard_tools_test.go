package relay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
)

// newToolCallUpstream streams a chat answer that is one function call
// whose arguments carry a card number, split over many chunks.
func newToolCallUpstream(t *testing.T) string {
	args := `{"note":"charge the card 4111 1111 1111 1111 today, then send the receipt to the customer"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := func(delta string, finish string) [2]string {
			return [2]string{"", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}`}
		}
		evs := [][2]string{chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"charge","arguments":""}}]}`, "null")}
		for i := 0; i < len(args); i += 5 {
			part, _ := json.Marshal(args[i:min(i+5, len(args))])
			evs = append(evs, chunk(fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":%s}}]}`, part), "null"))
		}
		evs = append(evs, chunk(`{}`, `"tool_calls"`),
			[2]string{"", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":` + guardUsage + `}`}, [2]string{"", "[DONE]"})
		writeSSE(w, evs...)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestGuardrailWindowsStreamedToolCallArguments(t *testing.T) {
	for _, d := range dialects {
		for _, action := range []string{"redact", "block"} {
			t.Run(d.name+"/"+action, func(t *testing.T) {
				e := newEnv(t)
				e.channel("a", newToolCallUpstream(t), nil)
				logs := captureLogs(e)
				e.guardrails(guardrail.Spec{Name: "no-cards", Type: guardrail.TypePII, Stages: []string{"response"},
					Config: json.RawMessage(`{"action":"` + action + `","window_chars":32}`)})
				resp := e.request(d.path(true), d.header, d.body("charge it", true))
				out := readAll(resp)
				if strings.Contains(out, "4111") || strings.Contains(out, "1111") {
					t.Fatalf("the card left in the arguments: %s", out)
				}
				switch action {
				case "redact":
					if !strings.Contains(out, "REDACTED:card") || !strings.Contains(out, "receipt") {
						t.Fatalf("redacted stream %s", out)
					}
				case "block":
					if !strings.Contains(out, "guardrail_blocked") || strings.Contains(out, "[DONE]") || strings.Contains(out, "receipt") {
						t.Fatalf("blocked stream %s", out)
					}
				}
				rows := e.rows("consume")
				if len(rows) != 1 || rows[0].Quota <= 0 {
					t.Fatalf("not billed: %+v", rows)
				}
				if l := logs.String(); strings.Contains(l, "stream ended early") || strings.Contains(l, "4111") {
					t.Fatalf("a guardrail's end was logged as a broken stream: %s", l)
				}
				if recs := guardOther(t, rows[0].Other); len(recs) != 1 || recs[0].Matches["card"] != 1 {
					t.Fatalf("row other %s", rows[0].Other)
				}
			})
		}
	}
}

// lockedBuffer is a log destination the handler goroutines share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// captureLogs sends the relay's log (every level) to a buffer.
func captureLogs(e *env) *lockedBuffer {
	buf := &lockedBuffer{}
	e.relay.Logger = slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return buf
}
