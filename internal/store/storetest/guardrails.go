package storetest

import (
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

var guardrailTests = []namedTest{
	{"guardrails are created, listed in order, updated and deleted; names are unique", func(t *testing.T, s store.Store) {
		r := s.Guardrails()
		a := &store.Guardrail{Name: "pii", Type: "pii", Config: `{"action":"block"}`, Stages: `["request"]`, Mode: "enforce", AppliesTo: `{}`}
		b := &store.Guardrail{Name: "keys", Type: "secrets", Config: `{}`, Stages: `["request","response"]`, Mode: "monitor", AppliesTo: `{"groups":["vip"]}`}
		must(t, r.Create(ctx(t), a), "create a")
		must(t, r.Create(ctx(t), b), "create b")
		if a.ID == 0 || b.ID <= a.ID || a.CreatedAt.IsZero() {
			t.Fatalf("ids %d, %d, created %v", a.ID, b.ID, a.CreatedAt)
		}
		wantErr(t, r.Create(ctx(t), &store.Guardrail{Name: "pii", Type: "pii", Config: "{}", Stages: "[]", Mode: "enforce", AppliesTo: "{}"}), store.ErrConflict, "a taken name")
		list, err := r.List(ctx(t))
		if err != nil || len(list) != 2 || list[0].Name != "pii" || list[1].AppliesTo != `{"groups":["vip"]}` {
			t.Fatalf("list %+v, %v", list, err)
		}
		b.Mode = "enforce"
		must(t, r.Update(ctx(t), b), "update")
		got, err := r.Get(ctx(t), b.ID)
		if err != nil || got.Mode != "enforce" || got.Stages != `["request","response"]` {
			t.Fatalf("get %+v, %v", got, err)
		}
		must(t, r.Delete(ctx(t), a.ID), "delete")
		_, err = r.Get(ctx(t), a.ID)
		wantErr(t, err, store.ErrNotFound, "a deleted guardrail")
		wantErr(t, r.Delete(ctx(t), a.ID), store.ErrNotFound, "deleting twice")
	}},
}
