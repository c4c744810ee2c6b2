package sqlstore

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestLiveNodeModesListsOnlyLiveNodesThatSaidTheirMode(t *testing.T) {
	for name, open := range targets(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t).(*Store)
			ctx := context.Background()
			now, err := s.DBNow(ctx)
			if err != nil {
				t.Fatal(err)
			}
			leases := []struct {
				node  string
				until time.Time
				redis *bool
			}{
				{"me", now.Add(time.Minute), ptr(false)},
				{"live-redis", now.Add(time.Minute), ptr(true)},
				{"live-plain", now.Add(time.Minute), ptr(false)},
				{"dead-redis", now.Add(-time.Second), ptr(true)},
				{"live-unsaid", now.Add(time.Minute), nil},
			}
			for _, l := range leases {
				if err := s.Holds().Lease(ctx, l.node, l.until); err != nil {
					t.Fatal(err)
				}
				if l.redis != nil {
					if err := s.MarkNodeRedis(ctx, l.node, *l.redis); err != nil {
						t.Fatal(err)
					}
				}
			}
			withRedis, without, err := s.LiveNodeModes(ctx, "me")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(withRedis, []string{"live-redis"}) || !slices.Equal(without, []string{"live-plain"}) {
				t.Fatalf("with Redis %v, without %v; want [live-redis] and [live-plain]", withRedis, without)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
