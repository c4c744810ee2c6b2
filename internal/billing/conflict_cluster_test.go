package billing

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// A node whose lease lapsed while it had answered a call it had not yet
// written: a serving node's sweep stores the call from the journal, with
// its lost reserve (one netted entry under the reserve's key). When the
// node goes on and writes its own queue, its reserve finds that entry —
// the same movement, already recorded, not a second one sharing its key:
// no error line, no conflict counted, and the books still agree to the
// unit. A reserve under that key that is another movement stays an alarm.
func TestASweptNodesOwnReserveIsNoIdempotencyConflict(t *testing.T) {
	for _, b := range clusterBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			c := newCluster(t, b.dsn(t), 1)
			nb := c.node(time.Hour)
			c.adopt(nb)
			na := c.node(time.Hour)
			c.adopt(na)
			var logs lockedBuffer
			na.w.log = slog.New(slog.NewTextHandler(&logs, nil))
			answered := c.reserve(na, 0, "a-answered", 600)
			c.settle(answered, 250)
			c.lapse(na)
			if _, err := nb.svc.Sweep(context.Background()); err != nil {
				t.Fatalf("the sweep of a serving node: %v", err)
			}
			c.renew(na)
			c.flush(na)
			if got := na.w.Conflicts(); got != 0 || strings.Contains(logs.String(), "level=ERROR") {
				t.Fatalf("conflicts %d after the node wrote the reserve its sweeper had stored; log:\n%s", got, logs.String())
			}
			c.quiesce(na, nb)
			c.checkCluster(na, nb)

			a := c.accts[0]
			na.w.Item(store.BillingItem{Entry: &store.LedgerEntry{Key: answered.Key() + ":" + store.LedgerReserve, Kind: store.LedgerReserve,
				UserID: a.user, TokenID: a.token, Delta: -900, TokenDelta: -900}})
			c.flush(na)
			if got := na.w.Conflicts(); got != 1 || !strings.Contains(logs.String(), "level=ERROR msg=\"idempotency key conflict") {
				t.Fatalf("conflicts %d for another movement under a recorded key, want 1 and an error line; log:\n%s", got, logs.String())
			}
			c.checkCluster(na, nb)
		})
	}
}
