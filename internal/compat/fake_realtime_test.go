package compat

import (
	"encoding/json"
	"fmt"

	"github.com/coder/websocket"
)

// realtimeText is the answer to every response.create on the fake socket.
const realtimeText = "Hello from the realtime upstream."

// realtime accepts the socket for the realtime model, announces the
// session, and answers each response.create with text deltas and a
// response.done carrying the fake usage, as the Realtime API does. Before
// that the conversation must have received a user message.
func (u *openAIUpstream) realtime(x *exchange) {
	if m := x.r.URL.Query().Get("model"); m != realtimeModel {
		x.refuse("realtime model %q, expected %q", m, realtimeModel)
		return
	}
	conn, err := websocket.Accept(x.w, x.r, nil)
	if err != nil {
		x.rc.problem(x.r, "websocket upgrade failed: "+err.Error())
		return
	}
	defer conn.CloseNow()
	ctx := x.r.Context()
	send := func(v map[string]any) error {
		b, _ := json.Marshal(v)
		return conn.Write(ctx, websocket.MessageText, b)
	}
	if send(map[string]any{"type": "session.created", "event_id": "ev_0", "session": map[string]any{
		"id": "sess_fake", "object": "realtime.session", "model": realtimeModel, "type": "realtime"}}) != nil {
		return
	}
	userText, responses := "", 0
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return // the gateway closed the socket (the client left)
		}
		var ev struct {
			Type string `json:"type"`
			Item struct {
				Role    string `json:"role"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"item"`
		}
		if json.Unmarshal(data, &ev) != nil || ev.Type == "" {
			x.rc.problem(x.r, "a client event that is not a typed JSON object")
			_ = send(realtimeError("invalid_event", "events must be JSON objects with a type"))
			continue
		}
		switch ev.Type {
		case "conversation.item.create":
			if ev.Item.Role == "user" && len(ev.Item.Content) > 0 {
				userText = ev.Item.Content[0].Text
			}
			_ = send(map[string]any{"type": "conversation.item.created", "event_id": "ev_item", "item": map[string]any{"id": "item_fake"}})
		case "response.create":
			if userText == "" {
				x.rc.problem(x.r, "response.create before any user message")
				_ = send(realtimeError("invalid_request", "the conversation has no user message"))
				continue
			}
			responses++
			if realtimeAnswer(send, fmt.Sprintf("resp_rt_%d", responses)) != nil {
				return
			}
			x.served(realtimeModel)
		}
	}
}

func realtimeError(code, msg string) map[string]any {
	return map[string]any{"type": "error", "event_id": "ev_err", "error": map[string]any{
		"type": "invalid_request_error", "code": code, "message": "fake realtime upstream: " + msg}}
}

func realtimeAnswer(send func(map[string]any) error, id string) error {
	events := []map[string]any{{"type": "response.created", "event_id": "ev_" + id + "_0",
		"response": map[string]any{"id": id, "object": "realtime.response", "status": "in_progress", "output": []any{}}}}
	for i, p := range pieces(realtimeText) {
		events = append(events, map[string]any{"type": "response.output_text.delta", "event_id": fmt.Sprintf("ev_%s_d%d", id, i),
			"response_id": id, "item_id": "item_" + id, "output_index": 0, "content_index": 0, "delta": p})
	}
	events = append(events, map[string]any{"type": "response.done", "event_id": "ev_" + id + "_done",
		"response": map[string]any{"id": id, "object": "realtime.response", "status": "completed", "output": []any{},
			"usage": map[string]any{"total_tokens": fakeInputTokens + fakeOutputTokens, "input_tokens": fakeInputTokens,
				"output_tokens":        fakeOutputTokens,
				"input_token_details":  map[string]any{"text_tokens": fakeInputTokens, "audio_tokens": 0, "cached_tokens": 0},
				"output_token_details": map[string]any{"text_tokens": fakeOutputTokens, "audio_tokens": 0}}}})
	for _, ev := range events {
		if err := send(ev); err != nil {
			return err
		}
	}
	return nil
}
