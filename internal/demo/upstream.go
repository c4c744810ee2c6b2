// Package demo is the built-in demo upstream: an OpenAI-compatible chat
// endpoint inside the binary that answers deterministically, so the gateway,
// its playground and its billing can be tried without any provider key.
package demo

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/tokenize"
)

// Upstream serves the demo model.
type Upstream struct {
	// Delay is the pause between streamed words, to make streaming visible.
	Delay time.Duration
}

// Handler returns the demo upstream's routes.
func (u *Upstream) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", u.chat)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"demo-chat","object":"model","created":1704067200,"owned_by":"turnpike"}]}`)
	})
	return mux
}

type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Temperature *float64 `json:"temperature"`
}

// Answer is the deterministic reply to a conversation whose last user
// message is prompt.
func Answer(prompt string, turns int) string {
	p := strings.TrimSpace(prompt)
	if len(p) > 200 {
		p = p[:200] + "…"
	}
	return fmt.Sprintf("Hello from the Turnpike demo upstream! You said: %q. This is turn %d of our conversation.", p, turns)
}

func (u *Upstream) chat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil || len(req.Messages) == 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"demo upstream: send model and messages","type":"invalid_request_error","param":null,"code":null}}`)
		return
	}
	last, turns, prompt := "", 0, 0
	for _, m := range req.Messages {
		text := contentText(m.Content)
		prompt += tokenize.Count(req.Model, text) + 3
		if m.Role == "user" {
			last = text
			turns++
		}
	}
	answer := Answer(last, turns)
	completion := tokenize.Count(req.Model, answer)
	id := fmt.Sprintf("chatcmpl-demo%d", time.Now().UnixNano())
	if req.Stream {
		u.stream(w, r, id, req.Model, answer, prompt+3, completion)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": answer}}},
		"usage": usage(prompt+3, completion),
	})
}

func usage(prompt, completion int) map[string]int {
	return map[string]int{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
}

func (u *Upstream) stream(w http.ResponseWriter, r *http.Request, id, model, answer string, prompt, completion int) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	words := strings.SplitAfter(answer, " ")
	for _, word := range words {
		if r.Context().Err() != nil {
			return
		}
		send(chunk(map[string]any{"content": word}, nil))
		if u.Delay > 0 {
			time.Sleep(u.Delay)
		}
	}
	send(chunk(map[string]any{}, "stop"))
	send(map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
		"choices": []any{}, "usage": usage(prompt, completion)})
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
