package sqlitetest

import (
	"context"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

func open(t *testing.T) *sqlstore.Store {
	t.Helper()
	st, err := sqlstore.OpenStore(context.Background(), DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestACopyIsAtTheNewestSchemaWithNothingLeftToApply(t *testing.T) {
	st := open(t)
	v, err := st.SchemaVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := sqlstore.KnownSchemaVersion(); v != want {
		t.Fatalf("schema version %d, want %d", v, want)
	}
	if a := st.Applied(); len(a) != 0 {
		t.Fatalf("opening a copy applied %d migrations, want none (the copy was not complete)", len(a))
	}
}

func TestCopiesDoNotShareRows(t *testing.T) {
	ctx := context.Background()
	a, b := open(t), open(t)
	if err := a.Prices().Upsert(ctx, store.ModelPrice{Name: "only-in-a", InputPerMTok: 1}); err != nil {
		t.Fatal(err)
	}
	list, err := b.Prices().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list {
		if p.Name == "only-in-a" {
			t.Fatal("a price written to one copy is seen in another")
		}
	}
	if got, err := a.Prices().Get(ctx, "only-in-a"); err != nil || got.InputPerMTok != 1 {
		t.Fatalf("the copy written to answers %+v, %v", got, err)
	}
}
