package relay

import (
	"context"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/contentlog"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// groupsOf is a group repository that lists fixed groups.
type groupsOf struct {
	store.GroupRepo
	groups []store.Group
}

func (g groupsOf) List(context.Context) ([]store.Group, error) { return g.groups, nil }

// Content logging off must cost a call nothing: the driver's steps are nil
// checks, with no copy and no allocation, also when another group logs.
func TestContentLoggingOffAllocatesNothingOnTheCallPath(t *testing.T) {
	svc := contentlog.New(contentlog.Options{})
	err := svc.Reload(context.Background(), groupsOf{groups: []store.Group{{Name: "audited", LogContent: &store.ContentLogging{Enabled: true, MaxKB: 64}},
		{Name: "default"}}})
	if err != nil {
		t.Fatal(err)
	}
	rl := &Relay{Deps: Deps{Content: svc}}
	for _, p := range []*auth.Principal{
		{Group: "default"},
		{Group: "audited", LogContent: &store.ContentLogging{Enabled: false, MaxKB: 64}},
	} {
		c := &callCore{rl: rl, principal: p}
		h := &funcHooks{}
		allocs := testing.AllocsPerRun(200, func() {
			c.beginContent(h)
			if c.content != nil {
				c.contentStream(&streamTally{})
			}
			c.endContent()
		})
		if c.content != nil || allocs != 0 {
			t.Errorf("group %s: capture %v, %v allocations a call", p.Group, c.content, allocs)
		}
	}
	// The group that logs gets a capture.
	c := &callCore{rl: rl, principal: &auth.Principal{Group: "audited"}}
	c.beginContent(&funcHooks{})
	if c.content == nil {
		t.Fatal("a call of a group that logs has no capture")
	}
	// Realtime (a connect hook) and batch lines keep none.
	rt := &callCore{rl: rl, principal: &auth.Principal{Group: "audited"}}
	rt.beginContent(&funcHooks{connect: func(*routing.Channel) error { return nil }})
	if rt.content != nil {
		t.Error("a realtime session has a capture")
	}
}
