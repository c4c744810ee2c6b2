package openai

import (
	"encoding/json"
	"testing"
)

func TestEncodeModelList(t *testing.T) {
	tests := []struct {
		name string
		ids  []string
		want string
	}{
		{"two models", []string{"gpt-4o", "claude-\"q\""},
			`{"object":"list","data":[{"id":"gpt-4o","object":"model","created":1700000000,"owned_by":"turnpike"},{"id":"claude-\"q\"","object":"model","created":1700000000,"owned_by":"turnpike"}]}`},
		{"no models still has a data array", nil, `{"object":"list","data":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(EncodeModelList(tt.ids, "turnpike", 1700000000))
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestEncodeModel(t *testing.T) {
	got := EncodeModel("gpt-4o", "openai", 42)
	if !json.Valid(got) {
		t.Fatalf("not JSON: %s", got)
	}
	if string(got) != `{"id":"gpt-4o","object":"model","created":42,"owned_by":"openai"}` {
		t.Errorf("got %s", got)
	}
}
