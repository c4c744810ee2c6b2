package sqlstore

import (
	"context"
	"testing"
)

func TestAPollQueryIsPreparedOnceAndAFailedPreparationIsTriedAgain(t *testing.T) {
	st := openSQLite(t)
	ctx := context.Background()
	const q = "SELECT v FROM poll_probe WHERE k = ?"
	if _, err := st.polled(ctx, q); err == nil {
		t.Fatal("a query on a missing table was prepared")
	}
	if _, err := st.DB().ExecContext(ctx, "CREATE TABLE poll_probe (k TEXT PRIMARY KEY, v TEXT); INSERT INTO poll_probe VALUES ('a', 'b')"); err != nil {
		t.Fatal(err)
	}
	first, err := st.polled(ctx, q)
	if err != nil {
		t.Fatalf("the failed preparation was kept: %v", err)
	}
	again, err := st.polled(ctx, q)
	if err != nil || again != first {
		t.Fatalf("prepared again (%p, then %p, %v); want the first statement kept", first, again, err)
	}
	var v string
	if err := st.pollQueryRow(ctx, q, "a").Scan(&v); err != nil || v != "b" {
		t.Fatalf("v = %q, %v; want b", v, err)
	}
}

func TestAPollQueryRowReportsAFailedPreparationOnScan(t *testing.T) {
	st := openSQLite(t)
	var v string
	if err := st.pollQueryRow(context.Background(), "SELECT v FROM no_such_table").Scan(&v); err == nil {
		t.Fatal("Scan reported no error for a query that could not be prepared")
	}
}
