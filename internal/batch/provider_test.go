package batch

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// providerWorld is a batch service over OpenAI channels (one per key
// list) serving model m, priced with strategy, on a real SQLite store.
func providerWorld(t *testing.T, strategy string, keys ...string) (*Service, *routing.Router, []int64) {
	ctx := context.Background()
	st, err := sqlstore.OpenStore(ctx, sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	price := store.ModelPrice{Name: "m", InputPerMTok: 1, OutputPerMTok: 2, Routing: &store.RoutingChoice{Strategy: strategy}}
	if err := st.Prices().Upsert(ctx, price); err != nil {
		t.Fatal(err)
	}
	bill := billing.NewService(billing.NewMemoryBalances(st), billing.NewWriter(st, nil, time.Second, 16), 500000)
	if err := bill.Reload(ctx, st); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i, k := range keys {
		c := &store.Channel{Name: "c" + string(rune('a'+i)), Type: upstream.TypeOpenAI, BaseURL: "http://127.0.0.1:1", Key: k,
			Models: []string{"m"}, Groups: []string{"default"}, Weight: 1, Status: store.StatusEnabled}
		if err := st.Channels().Create(ctx, c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	all, err := st.Channels().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := routing.NewRouter(routing.NewHealth(nil, nil))
	r.Swap(routing.NewTable(all))
	return New(Deps{Router: r, Billing: bill, Files: st.Files()}), r, ids
}

func TestAProviderBatchGoesWhereTheModelsStrategySends(t *testing.T) {
	s, r, ids := providerWorld(t, routing.StrategyLeastBusy, "k1", "k2")
	busy := r.Table().Channel(ids[0])
	for range 3 {
		busy.Begin()
	}
	pl := &plan{models: map[string]*modelPlan{"m": {lines: 1}}}
	for range 20 {
		ch := s.providerChannel("openai", "default", pl)
		if ch == nil || ch.ID != ids[1] {
			t.Fatalf("provider batch channel %v, want the idle channel %d", ch, ids[1])
		}
	}
}

func TestAProviderBatchTakesAUsableKeyOfItsChannel(t *testing.T) {
	s, r, ids := providerWorld(t, routing.StrategyWeighted, "bad\ngood")
	base := r.Table().Channel(ids[0])
	r.Health.Report(base.WithKey(0), 0, &ir.Error{Status: 401, UpstreamStatus: 401, Message: "refused"})
	pl := &plan{models: map[string]*modelPlan{"m": {lines: 1}}}
	for range 10 {
		ch := s.providerChannel("openai", "default", pl)
		if ch == nil || ch.KeyIndex != 1 || ch.Key != "good" {
			t.Fatalf("provider batch key %v, want key 1", ch)
		}
	}
	st := providerState{KeyIndex: 0}
	s.repick(base, &st)
	if st.KeyIndex != 1 {
		t.Errorf("a batch with nothing at its provider stayed on the refused key")
	}
	st = providerState{KeyIndex: 0, FileID: "file-1"}
	s.repick(base, &st)
	if st.KeyIndex != 0 {
		t.Errorf("a batch whose file is at the provider left the key that owns it")
	}
}

func TestAProviderBatchNamingASessionGoesToTheKeyTheSessionIsPinnedTo(t *testing.T) {
	s, r, ids := providerWorld(t, routing.StrategyWeighted, "k1", "k2", "k3")
	ctx := context.Background()
	line := `{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"m","user":"session-9","messages":[]}}` + "\n"
	if _, err := s.Blobs.Put(ctx, "file-in", strings.NewReader(line), 1<<20); err != nil {
		t.Fatal(err)
	}
	key, ttl, ok := s.batchSession(ctx, "file-in", "default", 7, "m")
	if !ok {
		t.Fatal("a line naming user has no session")
	}
	if other, _, _ := s.batchSession(ctx, "file-in", "default", 8, "m"); other == key {
		t.Fatal("two users naming the same session share a pin")
	}
	if err := r.Pins.Set(ctx, key, routing.Pin{ChannelID: ids[2]}, ttl); err != nil {
		t.Fatal(err)
	}
	pl := &plan{models: map[string]*modelPlan{"m": {lines: 1}}, fileID: "file-in", principal: &auth.Principal{UserID: 7, Group: "default"}}
	for range 20 {
		if ch := s.providerChannel("openai", "default", pl); ch == nil || ch.ID != ids[2] {
			t.Fatalf("provider batch channel %v, want the pinned %d", ch, ids[2])
		}
	}
}
