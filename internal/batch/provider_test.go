package batch

import (
	"testing"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestBatchCapableMatchesTheChannelsWireToTheBatchForm(t *testing.T) {
	ch := func(typ int, settings map[string]any) *routing.Channel {
		return &routing.Channel{Channel: store.Channel{Type: typ, Settings: settings}}
	}
	on := map[string]any{"batches": true}
	off := map[string]any{"batches": false}
	tests := []struct {
		name string
		ch   *routing.Channel
		kind string
		want bool
	}{
		{"openai runs OpenAI-form batches", ch(1, nil), "openai", true},
		{"azure runs OpenAI-form batches", ch(3, nil), "openai", true},
		{"settings.batches false turns openai off", ch(1, off), "openai", false},
		{"an OpenAI-compatible preset only when it says so", ch(43, nil), "openai", false},
		{"an OpenAI-compatible preset that says so", ch(43, on), "openai", true},
		{"a messages-wire channel never takes an OpenAI-form batch", ch(14, on), "openai", false},
		{"a messages-wire channel that says so runs Message Batches", ch(14, on), kindMessages, true},
		{"a messages-wire channel that does not say so", ch(14, nil), kindMessages, false},
		{"an OpenAI channel never takes a Message Batch", ch(1, on), kindMessages, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := batchCapable(tc.ch, tc.kind); got != tc.want {
				t.Fatalf("batchCapable = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestUpstreamLinesNameTheModelAndEndpointAsTheProviderDoes(t *testing.T) {
	line := []byte(`{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o","messages":[]}}`)
	tests := []struct {
		name               string
		ch                 *routing.Channel
		wantModel, wantURL string
		wantEndpoint       string
	}{
		{"openai with a mapping", &routing.Channel{Channel: store.Channel{Type: 1, ModelMapping: map[string]string{"gpt-4o": "gpt-4o-2024"}}},
			"gpt-4o-2024", "/v1/chat/completions", "/v1/chat/completions"},
		{"azure names its deployment and drops the version", &routing.Channel{Channel: store.Channel{Type: 3,
			Settings: map[string]any{"deployments": map[string]any{"gpt-4o": "prod-4o"}}}}, "prod-4o", "/chat/completions", "/chat/completions"},
		{"azure's v1 API keeps the version", &routing.Channel{Channel: store.Channel{Type: 3,
			Settings: map[string]any{"api_version": "v1"}}}, "gpt-4o", "/v1/chat/completions", "/v1/chat/completions"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := wireFor(tc.ch, 0)
			got := w.upstreamLine(tc.ch, line)
			if m := gjson.GetBytes(got, "body.model").String(); m != tc.wantModel {
				t.Errorf("model %q, want %q", m, tc.wantModel)
			}
			if u := gjson.GetBytes(got, "url").String(); u != tc.wantURL {
				t.Errorf("url %q, want %q", u, tc.wantURL)
			}
			if e := w.endpoint("/v1/chat/completions"); e != tc.wantEndpoint {
				t.Errorf("endpoint %q, want %q", e, tc.wantEndpoint)
			}
		})
	}
}
