package batch

import (
	"testing"

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
