package mcpgw

import (
	"reflect"
	"testing"
)

// FuzzSessionIDOpen feeds made-up Mcp-Session-Id values to the opener: none
// may open (only the gateway's seal does) and none may panic.
func FuzzSessionIDOpen(f *testing.F) {
	s := newSessions("fuzz-secret")
	sealed := &session{Key: 7, Issued: 1, Up: map[string]upSession{"1": {ID: "u", Version: "2025-06-18"}}}
	good, err := s.issue(sealed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add("")
	f.Add("AAAA")
	f.Add(good[:len(good)-1] + "A")
	// The nonce is random, so each fuzzing process seals its own id; the
	// only sessions that exist under this secret are copies of sealed.
	f.Fuzz(func(t *testing.T, id string) {
		v := s.open(id)
		if v != nil && !reflect.DeepEqual(v, sealed) {
			t.Fatalf("%q opened as %+v, which was never sealed", id, v)
		}
	})
}

// FuzzInitializes feeds client bodies to the check that decides whether a
// request opens a session; it must never panic.
func FuzzInitializes(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`))
	f.Add([]byte(`[{"method":"ping"},{"method":"initialize"}]`))
	f.Add([]byte(`[`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		_ = initializes(body)
	})
}

func TestInitializesFindsTheMethodAloneOrInABatch(t *testing.T) {
	for _, tc := range []struct {
		body string
		want bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, true},
		{` [{"method":"notifications/initialized"},{"method":"initialize"}]`, true},
		{`{"method":"tools/list"}`, false},
		{`{"method":"initialize"`, false},
		{`"initialize"`, false},
	} {
		if got := initializes([]byte(tc.body)); got != tc.want {
			t.Errorf("initializes(%s) = %v", tc.body, got)
		}
	}
}

func TestASessionOpensOnlyUnderTheSecretThatSealedIt(t *testing.T) {
	a, b := newSessions("secret-a"), newSessions("secret-b")
	id, err := a.issue(&session{Key: 3, Scope: "alpha", Issued: 9})
	if err != nil {
		t.Fatal(err)
	}
	if v := a.open(id); v == nil || v.Key != 3 || v.Scope != "alpha" {
		t.Fatalf("open under the same secret: %+v", v)
	}
	if v := b.open(id); v != nil {
		t.Fatalf("opened under another secret: %+v", v)
	}
}
