package providers

import (
	"errors"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/upstream"
)

func TestEveryContractTypeIsKnownAndUnknownOnesAreNot(t *testing.T) {
	chat := []int{1, 3, 4, 8, 14, 17, 20, 24, 25, 26, 27, 33, 34, 35, 40, 41, 42, 43, 45, 48}
	for _, typ := range chat {
		if _, ok := For(typ); !ok {
			t.Errorf("type %d has no adapter", typ)
		}
	}
	for _, typ := range []int{36, 50, 51, 52, 54, 55, 60, 61} {
		if _, ok := For(typ); ok || !Known(typ) {
			t.Errorf("type %d should be a known task carrier without a chat wire", typ)
		}
	}
	for _, typ := range []int{2, 99, 777} {
		if Known(typ) {
			t.Errorf("type %d should be unknown", typ)
		}
	}
}

func TestValidateRefusesWhatNoProviderCanUseNamingTheField(t *testing.T) {
	cases := []struct {
		name    string
		target  upstream.Target
		claimed bool
		field   string
	}{
		{"unknown type", upstream.Target{Type: 777}, false, "type"},
		{"headers not an object", upstream.Target{Type: 1, Settings: map[string]any{"headers": "X-A: b"}}, false, "settings.headers"},
		{"header name with a space", upstream.Target{Type: 1, Settings: map[string]any{"headers": map[string]any{"X A": "b"}}}, false, "settings.headers"},
		{"header value with a line break", upstream.Target{Type: 1, Settings: map[string]any{"headers": map[string]any{"X-A": "b\r\nHost: evil"}}}, false, "settings.headers.X-A"},
		{"path prefix not a string", upstream.Target{Type: 1, Settings: map[string]any{"path_prefix": 3}}, false, "settings.path_prefix"},
		{"azure without an address", upstream.Target{Type: 3}, false, "base_url"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var se *upstream.SettingError
			if err := Validate(tc.target, tc.claimed); !errors.As(err, &se) || se.Field != tc.field {
				t.Fatalf("got %v, want an error on %s", err, tc.field)
			}
		})
	}
	ok := []upstream.Target{
		{Type: 777},
		{Type: 1, Settings: map[string]any{"headers": map[string]any{"HTTP-Referer": "https://app.example"}, "path_prefix": ""}},
		{Type: 50},
	}
	for i, tg := range ok {
		if err := Validate(tg, i == 0); err != nil {
			t.Errorf("%+v: %v", tg, err)
		}
	}
}

func TestNoOwnAdapterShadowsABuiltinOne(t *testing.T) {
	for typ := range own {
		if _, dup := upstream.Builtin(typ); dup {
			t.Errorf("type %d has two adapters", typ)
		}
	}
}

// Every type the catalog has a chat adapter for holds a chat key, so a
// task plugin listing it gets its channels only with consent; a hand-kept
// list missed Ali (17) and MiniMax (35) when they gained adapters.
func TestEveryChatAdapterTypeHoldsAChatKey(t *testing.T) {
	for typ := 0; typ < 1000; typ++ {
		_, chat := For(typ)
		if HoldsChatKey(typ) != chat {
			t.Errorf("type %d: HoldsChatKey = %v, but it has a chat adapter: %v", typ, HoldsChatKey(typ), chat)
		}
		if chat && upstream.IsTaskCarrier(typ) {
			t.Errorf("type %d is both a chat adapter and a task carrier", typ)
		}
	}
	for _, typ := range []int{upstream.TypeAli, upstream.TypeMiniMax, upstream.TypeOpenAI, upstream.TypeVertex, upstream.TypeAWS, upstream.TypeCohere} {
		if !HoldsChatKey(typ) {
			t.Errorf("type %d carries a chat key", typ)
		}
	}
	for _, typ := range []int{upstream.TypeSunoAPI, upstream.TypeKling, upstream.TypeTaskPlugin} {
		if HoldsChatKey(typ) {
			t.Errorf("task carrier %d holds no chat key", typ)
		}
	}
}
