package relay

import (
	"context"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestChannelTestSendsTheModelMappedOnce(t *testing.T) {
	e := newEnv(t)
	f := &fakeOpenAI{}
	srv := newFake(t, f)
	c := &store.Channel{Name: "c", Type: 1, BaseURL: srv.URL, Key: "k", Models: []string{"a"},
		ModelMapping: map[string]string{"a": "b", "b": "c"}}
	if _, err := TestChannel(context.Background(), e.relay, c); err != nil {
		t.Fatal(err)
	}
	if got := f.last()["model"]; got != "b" {
		t.Fatalf("the test call asked for model %v, want b (a mapped once)", got)
	}
}
