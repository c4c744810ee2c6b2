package payments_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store/testdb"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// TestConcurrentDeliveriesAcrossTwoNodesCreditOnce sends 20 deliveries of a
// paid checkout at once, split over two gateways on one database: replays
// of one event and several distinct events for the same session, as
// Stripe's retries and duplicates produce. One credits; the database has one
// topup row and the balance rose once.
func TestConcurrentDeliveriesAcrossTwoNodesCreditOnce(t *testing.T) {
	dbs := map[string]func(t *testing.T) string{
		"sqlite": func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "shared.db") },
	}
	if base := os.Getenv("TURNPIKE_TEST_POSTGRES"); base != "" {
		dbs["postgres"] = func(t *testing.T) string { return testdb.Postgres(t, base) }
	} else {
		t.Log("TURNPIKE_TEST_POSTGRES is not set: the PostgreSQL run is skipped")
	}
	for name, dsn := range dbs {
		t.Run(name, func(t *testing.T) {
			f := newFakeStripe(t)
			shared := testkit.WithConfig(func(c *config.Config) { c.Database = dsn(t) })
			var db string
			a, alice := startShop(t, f, shared, testkit.WithConfig(func(c *config.Config) { db = c.Database }))
			b := testkit.Start(t, testkit.WithRootToken(rootToken), withStripe(f), testkit.WithConfig(func(c *config.Config) { c.Database = db }),
				testkit.WithUsers(config.SeedUser{Username: "alice", Password: "alice-password", Role: "user", Group: "default", Quota: 1000}))
			id := topUp(t, a, alice, 7.77)
			s := f.session(t, id)

			const n = 20
			start := make(chan struct{})
			var wg sync.WaitGroup
			var mu sync.Mutex
			handled, statuses := 0, map[int]int{}
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					body := event(fmt.Sprintf("evt_race_%d", i%4), "checkout.session.completed", "2024-06-20", s, 777, "paid")
					sig := sign(body, time.Now(), webhookSecret)
					<-start
					status, raw := deliver(t, []*testkit.Gateway{a, b}[i%2], body, sig)
					mu.Lock()
					defer mu.Unlock()
					statuses[status]++
					if strings.Contains(raw, `"handled":true`) {
						handled++
					}
				}()
			}
			close(start)
			wg.Wait()
			if statuses[http.StatusOK] != n || handled != 1 {
				t.Fatalf("statuses %v, %d deliveries credited; want %d × 200 and one credit", statuses, handled, n)
			}
			credit := int64(777 * quotaPerUSD / 100)
			rows := append(topupRows(t, a, id), topupRows(t, b, id)...)
			// Both nodes read the same table, so the one row is seen twice.
			if len(rows) != 2 || rows[0].ID != rows[1].ID || rows[0].Quota != credit {
				t.Fatalf("topup rows seen from the two nodes: %+v", rows)
			}
			u, err := a.App.Store.Users().GetByUsername(t.Context(), "alice")
			if err != nil || u.Quota != 1000+credit {
				t.Fatalf("alice's stored balance %d (%v), want %d", u.Quota, err, 1000+credit)
			}
			if o := orders(t, b, "/api/user/topups", b.Login(t, "alice", "alice-password"))[0]; o["state"] != "paid" || o["paid_cents"] != float64(777) {
				t.Fatalf("order seen from node B: %v", o)
			}
		})
	}
}
