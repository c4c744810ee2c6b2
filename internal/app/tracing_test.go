package app_test

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// otlpReceiver is an OTLP/HTTP trace endpoint that decodes each protobuf
// export and keeps its spans.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad export", 400)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
	o.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	b, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Write(b)
}

func (o *otlpReceiver) snapshot() []*tracepb.Span {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]*tracepb.Span(nil), o.spans...)
}

func attr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			switch v := a.Value.Value.(type) {
			case *commonpb.AnyValue_StringValue:
				return v.StringValue
			case *commonpb.AnyValue_IntValue:
				return fmt.Sprint(v.IntValue)
			}
		}
	}
	return ""
}

func TestTracesReachTheOTLPEndpointAndTheUpstream(t *testing.T) {
	rec := &otlpReceiver{}
	collector := httptest.NewServer(rec)
	defer collector.Close()
	var mu sync.Mutex
	var parents []string // traceparent headers the upstream received
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		parents = append(parents, r.Header.Get("traceparent"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","created":1,"model":"up-m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)
	}))
	defer up.Close()
	start := func(t *testing.T) *testkit.Gateway {
		weight := 1
		return testkit.Start(t, testkit.WithRootToken("root-secret"),
			testkit.WithUsers(config.SeedUser{Username: "alice", Password: "pw-longer", Role: "user", Group: "default", Quota: 1_000_000}),
			testkit.WithTokens(config.SeedToken{Name: "a", User: "alice", Key: "sk-alice"}),
			testkit.WithChannels(config.SeedChannel{Name: "c", Type: "openai", BaseURL: up.URL, Key: "k", Models: []string{"m"},
				Groups: []string{"default"}, Weight: &weight, ModelMapping: map[string]string{"m": "up-m"}}),
			testkit.WithModels(map[string]config.SeedPrice{"m": {InputPerMTok: 1, OutputPerMTok: 1}}))
	}

	t.Run("unset, nothing is exported and no traceparent goes upstream", func(t *testing.T) {
		g := start(t)
		if resp, body := send(t, g, "POST", "/v1/chat/completions", "sk-alice", "", chatBody("m")); resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		g.Stop()
		mu.Lock()
		defer mu.Unlock()
		if len(rec.snapshot()) != 0 || len(parents) != 1 || parents[0] != "" {
			t.Fatalf("spans %d, traceparents %q", len(rec.snapshot()), parents)
		}
		parents = nil
	})

	t.Run("set, a server span, a client span per attempt, GenAI attributes and traceparent upstream", func(t *testing.T) {
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
		g := start(t)
		resp, body := send(t, g, "POST", "/v1/chat/completions", "sk-alice", "traced-1", chatBody("m"))
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		g.Stop() // flushes the exporter
		var server, client *tracepb.Span
		testkit.WaitFor(5*time.Second, 20*time.Millisecond, func() bool {
			server, client = nil, nil
			for _, s := range rec.snapshot() {
				switch {
				case s.Kind == tracepb.Span_SPAN_KIND_SERVER && attr(s, "turnpike.request_id") == "traced-1":
					server = s
				case s.Kind == tracepb.Span_SPAN_KIND_CLIENT:
					client = s
				}
			}
			return server != nil && client != nil
		})
		if server == nil || client == nil {
			t.Fatalf("spans received: %v", rec.snapshot())
		}
		checks := []struct {
			name       string
			span       *tracepb.Span
			key, value string
		}{
			{"server route", server, "http.route", "POST /v1/chat/completions"},
			{"server status", server, "http.response.status_code", "200"},
			{"server operation", server, "gen_ai.operation.name", "chat"},
			{"server input tokens", server, "gen_ai.usage.input_tokens", "3"},
			{"client operation", client, "gen_ai.operation.name", "chat"},
			{"client request model", client, "gen_ai.request.model", "m"},
			{"client response model", client, "gen_ai.response.model", "up-m"},
			{"client provider", client, "gen_ai.provider.name", "openai"},
			{"client input tokens", client, "gen_ai.usage.input_tokens", "3"},
			{"client output tokens", client, "gen_ai.usage.output_tokens", "2"},
		}
		for _, c := range checks {
			if got := attr(c.span, c.key); got != c.value {
				t.Errorf("%s: %s = %q, want %q", c.name, c.key, got, c.value)
			}
		}
		if hex.EncodeToString(client.TraceId) != hex.EncodeToString(server.TraceId) || hex.EncodeToString(client.ParentSpanId) != hex.EncodeToString(server.SpanId) {
			t.Errorf("the client span is not the server span's child")
		}
		mu.Lock()
		defer mu.Unlock()
		want := "00-" + hex.EncodeToString(client.TraceId) + "-" + hex.EncodeToString(client.SpanId) + "-01"
		if len(parents) != 1 || parents[0] != want {
			t.Errorf("upstream traceparent %q, want %q", parents, want)
		}
	})
}
