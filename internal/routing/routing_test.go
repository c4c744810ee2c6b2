package routing

import (
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func ch(id int64, prio int64, weight int, status string) store.Channel {
	return store.Channel{ID: id, Name: "c", Priority: prio, Weight: weight, Status: status,
		Models: []string{"m"}, Groups: []string{"default"}}
}

func TestPlanTriesHigherPriorityTierFirst(t *testing.T) {
	r := NewRouter(NewHealth(nil, nil))
	r.Swap(NewTable([]store.Channel{ch(1, 0, 1, "enabled"), ch(2, 10, 1, "enabled"), ch(3, 5, 1, "enabled")}))
	plan := r.Plan("default", "m", 3, nil)
	if len(plan) != 3 || plan[0].ID != 2 || plan[1].ID != 3 || plan[2].ID != 1 {
		t.Fatalf("plan order %v", ids(plan))
	}
}

func TestPlanSkipsDisabledCoolingAndOtherGroups(t *testing.T) {
	h := NewHealth(nil, nil)
	r := NewRouter(h)
	other := ch(4, 0, 1, "enabled")
	other.Groups = []string{"vip"}
	r.Swap(NewTable([]store.Channel{ch(1, 0, 1, "disabled"), ch(2, 0, 1, "enabled"), ch(3, 0, 1, "enabled"), other}))
	h.CoolDown(3, "401")
	plan := r.Plan("default", "m", 5, nil)
	if len(plan) != 1 || plan[0].ID != 2 {
		t.Fatalf("plan %v", ids(plan))
	}
	if st := h.Status(3, 0); st.State != StateCooling || st.Until == nil || st.Reason != "401" {
		t.Fatalf("status %+v", st)
	}
}

func TestPlanSplitsByWeightInsideATier(t *testing.T) {
	r := NewRouter(NewHealth(nil, nil))
	r.Swap(NewTable([]store.Channel{ch(1, 0, 3, "enabled"), ch(2, 0, 1, "enabled")}))
	first := map[int64]int{}
	for i := 0; i < 4000; i++ {
		first[r.Plan("default", "m", 2, nil)[0].ID]++
	}
	// Expect about 3000 vs 1000; allow generous slack against flakiness.
	if first[1] < 2700 || first[1] > 3300 {
		t.Fatalf("weight 3 channel chosen first %d of 4000 times", first[1])
	}
}

func TestPlanStopsAtMax(t *testing.T) {
	r := NewRouter(NewHealth(nil, nil))
	r.Swap(NewTable([]store.Channel{ch(1, 0, 1, "enabled"), ch(2, 0, 1, "enabled"), ch(3, 1, 1, "enabled")}))
	if got := len(r.Plan("default", "m", 2, nil)); got != 2 {
		t.Fatalf("plan length %d", got)
	}
}

func ids(cs []*Channel) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}
