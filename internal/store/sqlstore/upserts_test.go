package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSQLiteBatchUpsertsAddToBoundBuckets adds one bucket to each rollup
// table through bound arguments (as PostgreSQL and MySQL do, and as SQLite
// did before the batch table) and then the same bucket through the batch
// table: the second must find the first (the same key, its times the same
// text) and add its sums, leaving one row holding twice each sum.
func TestSQLiteBatchUpsertsAddToBoundBuckets(t *testing.T) {
	hour := time.Date(2026, 12, 7, 14, 0, 0, 0, time.FixedZone("X", 3600))
	for tb, u := range bucketUpserts {
		t.Run(u.table, func(t *testing.T) {
			st := openSQLite(t)
			ctx := context.Background()
			keys := strings.Split(u.keys, ", ")
			var args []any
			for i, col := range strings.Split(u.cols, ", ") {
				switch {
				case col == "day":
					args = append(args, dbTime(hour.Truncate(24*time.Hour)))
				case col == "hour":
					args = append(args, dbTime(hour))
				case col == "model" || col == "type" || col == "class":
					args = append(args, "name-"+col)
				case i < len(keys)+1:
					args = append(args, int64(10+i)) // a key id
				default:
					args = append(args, int64(1000*i+7)) // a sum
				}
			}
			if _, err := st.DB().ExecContext(ctx, st.bucketUpsertSQL(u, 1), args...); err != nil {
				t.Fatalf("bound upsert: %v", err)
			}
			b, err := st.batch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			err = st.withTx(ctx, func(tx *sql.Tx) error { return upsert(ctx, tx, b, bucketTable(tb), args) })
			if err != nil {
				t.Fatalf("batch upsert: %v", err)
			}
			sums := strings.Split(u.sums, ", ")
			var rows int64
			got := make([]int64, len(sums))
			dst := []any{&rows}
			for i := range got {
				dst = append(dst, &got[i])
			}
			q := fmt.Sprintf("SELECT COUNT(*), SUM(%s) FROM %s", strings.Join(sums, "), SUM("), u.table)
			if err := st.DB().QueryRowContext(ctx, q).Scan(dst...); err != nil {
				t.Fatal(err)
			}
			if rows != 1 {
				t.Fatalf("%d rows, want the one bucket", rows)
			}
			for i, v := range got {
				if want := 2 * args[len(args)-len(sums)+i].(int64); v != want {
					t.Errorf("%s = %d, want %d", sums[i], v, want)
				}
			}
		})
	}
}

// TestUpsertRefusesPartRows: values that are not whole rows of the table
// are a caller's mistake, refused before anything is written.
func TestUpsertRefusesPartRows(t *testing.T) {
	st := openSQLite(t)
	ctx := context.Background()
	b, err := st.batch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = st.withTx(ctx, func(tx *sql.Tx) error { return upsert(ctx, tx, b, rowBooks, make([]any, 9)) })
	if err == nil || !strings.Contains(err.Error(), "not whole rows") {
		t.Fatalf("err = %v, want the part row refused", err)
	}
}
