package relay

import (
	"errors"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/routing"
)

// TestNilFuncHooksAreTheDriversDefaults: a surface that leaves a hook out
// gets what the driver did for a nil field before hooks were an interface.
func TestNilFuncHooksAreTheDriversDefaults(t *testing.T) {
	cause := errors.New("no channel")
	for name, h := range map[string]hooks{"funcHooks": &funcHooks{}, "chatHooks": (*chatHooks)(&call{})} {
		if served, err := h.offerToPlugin(); served || err != nil {
			t.Errorf("%s: offer served %v, %v", name, served, err)
		}
		if err := h.noChannelAnswer(cause); err != cause {
			t.Errorf("%s: no channel answered %v, want the core's error", name, err)
		}
		if h.connector() != nil {
			t.Errorf("%s: a connect hook where none was given", name)
		}
	}
	f := &funcHooks{}
	if err := f.guardStage(); err != nil {
		t.Errorf("a missing guard refused: %v", err)
	}
	if hit, err := f.cachedAnswer(); hit || err != nil {
		t.Errorf("a missing cache answered: %v, %v", hit, err)
	}
	if _, ok := f.affinity(); ok {
		t.Error("a missing session hook named a session")
	}
}

// TestTheChatCallsHooksAllocateNothing pins the point of chatHooks: the
// driver reaches the chat call's hooks without a closure per hook and call.
func TestTheChatCallsHooksAllocateNothing(t *testing.T) {
	if raceDetector {
		t.Skip("allocation counts under the race detector are not a release build's")
	}
	c := &call{wire: func(*routing.Channel) bool { return true }}
	var sink func(*routing.Channel) bool
	allocs := testing.AllocsPerRun(100, func() {
		var h hooks = (*chatHooks)(c)
		sink = h.channelFilter()
		_, _ = h.offerToPlugin()
		_ = h.connector()
	})
	if allocs != 0 || sink == nil {
		t.Errorf("the chat call's hooks: %v allocations, filter %v", allocs, sink != nil)
	}
}
