package relay

import (
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// A realtime client that leaves during a response: the gateway sends
// response.cancel, follows the response for at most 5 s (as the upstream
// sees it), and the row says the client left (CONTRACT §13).
func TestRealtimeResponseLeftByTheClientIsFollowedFiveSecondsAfterItsCancel(t *testing.T) {
	e := newEnv(t)
	f := &fakeRealtime{} // never answers the cancel
	e.realtimeChannel(f)
	c, _, err := e.dialRealtime("gpt-4o-mini", bearer(testKey))
	if err != nil {
		t.Fatal(err)
	}
	write(t, c, websocket.MessageText, "partial-until-cancel")
	readText(t, c)
	readText(t, c)
	_ = c.CloseNow()
	select {
	case <-f.closed:
	case <-time.After(9 * time.Second):
		t.Fatal("the upstream socket stayed open")
	}
	f.mu.Lock()
	followed := f.closedAt.Sub(f.cancelAt)
	f.mu.Unlock()
	if f.cancelAt.IsZero() || followed < 4*time.Second || followed > 6*time.Second {
		t.Fatalf("the upstream was closed %v after the response.cancel (cancel seen: %v), want 5 s", followed, !f.cancelAt.IsZero())
	}
	e.endRealtime()
	rows := e.rows(store.LogConsume)
	if len(rows) != 1 || !containsAll(string(rows[0].Other), `"client_left":true`, `"interrupted":true`) {
		t.Fatalf("consume rows %+v", rows)
	}
}

func TestRealtimeResponseDoneAfterTheClientLeftIsMarkedOnItsRow(t *testing.T) {
	e := newEnv(t)
	f := &fakeRealtime{answerCancel: true}
	e.realtimeChannel(f)
	c, _, err := e.dialRealtime("gpt-4o-mini", bearer(testKey))
	if err != nil {
		t.Fatal(err)
	}
	write(t, c, websocket.MessageText, "partial-until-cancel")
	readText(t, c)
	readText(t, c)
	_ = c.CloseNow()
	e.awaitConsumeRow()
	e.endRealtime()
	rows := e.rows(store.LogConsume)
	if len(rows) != 1 || rows[0].PromptTokens != 100000 || !containsAll(string(rows[0].Other), `"client_left":true`) {
		t.Fatalf("consume rows %+v", rows)
	}
}

// Delivered audio cannot be counted: a response that sent audio and whose
// usage never came bills its reservation.
func TestRealtimeAudioLeftUncountedBillsTheReservation(t *testing.T) {
	e := newEnv(t)
	c, before := e.realtimeSession()
	write(t, c, websocket.MessageText, "partial-audio")
	readText(t, c)
	readText(t, c)
	_ = c.Close(websocket.StatusNormalClosure, "leaving before response.done")
	e.endRealtime()
	// The response's reservation: 1,000 tokens each way at 0.15 and 0.60
	// $/Mtok, × 500,000/$.
	if charged := before - e.balance(); charged != 375 {
		t.Fatalf("charged %d, want the 375 reserved", charged)
	}
	rows := e.rows(store.LogConsume)
	if len(rows) != 1 || !containsAll(string(rows[0].Other), `"client_left":true`, `"output_audio_bytes"`) {
		t.Fatalf("consume rows %+v", rows)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
