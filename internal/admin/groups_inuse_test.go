package admin

import (
	"context"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// CONTRACT §16: a group that users, keys or channels still use cannot be
// deleted; the 409 names what to move first.
func TestDeletingAGroupInUseIsRefusedNamingItsUsers(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.d.Store.Channels().Create(ctx, &store.Channel{Name: "eu-pool", Type: 1, BaseURL: "http://127.0.0.1:1", Key: "sk-x",
		Models: []string{"m"}, Groups: []string{"eu"}, Status: store.StatusEnabled}); err != nil {
		t.Fatal(err)
	}
	says := func(words ...string) func(*testing.T, *env, response) {
		return func(t *testing.T, _ *env, r response) {
			for _, w := range words {
				if !strings.Contains(string(r.raw), w) {
					t.Fatalf("409 does not name %q: %s", w, r.raw)
				}
			}
		}
	}
	e.run([]scenario{
		{name: "the default group exists", who: "admin", method: "PUT", path: "/api/groups/default", body: `{"ratio":1}`, status: 200},
		{name: "the group every user is in cannot go", who: "admin", method: "DELETE", path: "/api/groups/default", status: 409,
			check: says("group_in_use", "alice", "root", "user(s)", "API key(s)")},
		{name: "it is still there", who: "admin", method: "GET", path: "/api/groups/default", status: 200},
		{name: "a group only a channel serves", who: "admin", method: "PUT", path: "/api/groups/eu", body: `{"ratio":1}`, status: 200},
		{name: "cannot go while the channel serves it", who: "admin", method: "DELETE", path: "/api/groups/eu", status: 409,
			check: says("eu-pool", "channel(s)")},
		{name: "an unused group can go", who: "admin", method: "PUT", path: "/api/groups/spare", body: `{"ratio":2}`, status: 200},
		{name: "and goes", who: "admin", method: "DELETE", path: "/api/groups/spare", status: 200},
	})
}
