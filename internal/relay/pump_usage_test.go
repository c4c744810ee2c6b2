package relay

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// convertedStream streams one paced-script answer from an upstream of
// format to the client request, without pacing, and returns the client's
// SSE data lines by event name ("" for unnamed).
func convertedStream(t *testing.T, format string, req func(base string) *http.Request) []pacedEvent {
	t.Helper()
	e := newEnv(t)
	next := make(chan struct{}, pacedPieces)
	for i := 0; i < pacedPieces; i++ {
		next <- struct{}{}
	}
	up := pacedUpstream(t, format, "\n", next)
	e.channel("up", up.URL, func(c *store.Channel) { c.Type = pacedChannelTypes[format] })
	resp, err := http.DefaultClient.Do(req(e.srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var out []pacedEvent
	name := ""
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			out = append(out, pacedEvent{name, strings.TrimPrefix(line, "data: ")})
			name = ""
		}
	}
	return out
}

// TestConvertedStreamsCarryUsageWhereClientsReadIt pins usage to the events
// real client libraries read it from.
func TestConvertedStreamsCarryUsageWhereClientsReadIt(t *testing.T) {
	messages := pacedClients[1].req
	alternate := pacedClients[2].req
	t.Run("messages-native message_start has the input estimate, message_delta the real counts", func(t *testing.T) {
		for _, format := range []string{"openai", "gemini"} {
			evs := convertedStream(t, format, messages)
			start, final := eventNamed(evs, "message_start"), eventNamed(evs, "message_delta")
			if in := gjson.Get(start, "message.usage.input_tokens").Int(); in <= 0 {
				t.Errorf("%s upstream: message_start input_tokens = %d, want the estimate: %s", format, in, start)
			}
			if gjson.Get(final, "usage.input_tokens").Int() != 1000 || gjson.Get(final, "usage.output_tokens").Int() != 500 {
				t.Errorf("%s upstream: message_delta usage is not the upstream's: %s", format, final)
			}
		}
	})
	t.Run("alternate-native usage rides on a chunk with content", func(t *testing.T) {
		for _, format := range []string{"openai", "anthropic"} {
			var withUsage []string
			for _, ev := range convertedStream(t, format, alternate) {
				if gjson.Get(ev.data, "usageMetadata").Exists() {
					withUsage = append(withUsage, ev.data)
				}
			}
			if len(withUsage) == 0 {
				t.Fatalf("%s upstream: no chunk carries usageMetadata", format)
			}
			last := withUsage[len(withUsage)-1]
			if !gjson.Get(last, "candidates.0.content.parts.0").Exists() {
				t.Errorf("%s upstream: usage on a chunk without content: %s", format, last)
			}
			if gjson.Get(last, "usageMetadata.promptTokenCount").Int() != 1000 || gjson.Get(last, "usageMetadata.candidatesTokenCount").Int() != 500 {
				t.Errorf("%s upstream: final usage is not the upstream's: %s", format, last)
			}
		}
	})
}

func eventNamed(evs []pacedEvent, name string) string {
	for _, ev := range evs {
		if ev.name == name {
			return ev.data
		}
	}
	return ""
}
