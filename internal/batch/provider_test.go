package batch

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/task/tasktest"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// providerWorld is a batch service over two OpenAI channels serving
// model m, priced with strategy.
func providerWorld(t *testing.T, strategy string, keys ...string) (*Service, *tasktest.World, []int64) {
	w := tasktest.Open(t, filepath.Join(t.TempDir(), "batch.db"))
	t.Cleanup(w.Close)
	w.Price(store.ModelPrice{Name: "m", InputPerMTok: 1, OutputPerMTok: 2, Routing: &store.RoutingChoice{Strategy: strategy}})
	var ids []int64
	for i, k := range keys {
		c := &store.Channel{Name: "c" + string(rune('a'+i)), Type: upstream.TypeOpenAI, BaseURL: "http://127.0.0.1:1", Key: k,
			Models: []string{"m"}, Groups: []string{"default"}, Weight: 1, Status: store.StatusEnabled}
		if err := w.Store.Channels().Create(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	w.ReloadChannels()
	return New(Deps{Router: w.Router, Billing: w.Billing}), w, ids
}

func TestAProviderBatchGoesWhereTheModelsStrategySends(t *testing.T) {
	s, w, ids := providerWorld(t, routing.StrategyLeastBusy, "k1", "k2")
	busy := w.Router.Table().Channel(ids[0])
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
	s, w, ids := providerWorld(t, routing.StrategyWeighted, "bad\ngood")
	base := w.Router.Table().Channel(ids[0])
	w.Router.Health.Report(base.WithKey(0), 0, &ir.Error{Status: 401, UpstreamStatus: 401, Message: "refused"})
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
