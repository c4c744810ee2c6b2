package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func openSQLite(t *testing.T) *Store {
	t.Helper()
	st, err := OpenStore(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "j.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// quotedRows returns every row of a query whose columns are quote(...)
// expressions, which show both the SQLite type and the exact value.
func quotedRows(t *testing.T, st *Store, query string) [][]string {
	t.Helper()
	rows, err := st.DB().Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]string, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func quoteAll(cols string) string {
	parts := strings.Split(cols, ", ")
	for i, c := range parts {
		parts[i] = "quote(" + c + ")"
	}
	return strings.Join(parts, ", ")
}

// TestSQLiteBatchRowsEqualBoundRows writes the same values once through the
// batch table and once through bound arguments, and requires identical
// stored values and types, so that readers and filters cannot tell them
// apart.
func TestSQLiteBatchRowsEqualBoundRows(t *testing.T) {
	created := time.Date(2025, 3, 4, 5, 6, 7, 891234000, time.FixedZone("X", 3600))
	awkward := "quote\" backslash\\ newline\n tab\t nul-free \x01\x1f é ✓ \u2028 𝄞"
	cases := []struct {
		name   string
		insert func(st *Store) error
		bound  func(st *Store) error
		query  string
		check  func(t *testing.T, st *Store)
	}{
		{
			name: "usage log",
			insert: func(st *Store) error {
				return st.Logs().Insert(context.Background(), []store.UsageLog{{Type: store.LogConsume, UserID: math.MaxInt64, TokenID: math.MinInt64,
					ChannelID: -3, Model: awkward, PromptTokens: 1 << 40, CompletionTokens: -7, Quota: 0, LatencyMS: 12,
					RequestID: awkward, Other: json.RawMessage(`{"k":"v\"\\\n","n":[1,2]}`), CreatedAt: created, TeamID: 41, OrgID: math.MaxInt64}})
			},
			bound: func(st *Store) error {
				_, err := st.DB().Exec("INSERT INTO usage_logs ("+logInsertColumns+") VALUES "+rowsSQL(logInsertCols, 1),
					store.LogConsume, int64(math.MaxInt64), int64(math.MinInt64), -3, awkward, 1<<40, -7, 0, 12, awkward,
					`{"k":"v\"\\\n","n":[1,2]}`, dbTime(created), 41, int64(math.MaxInt64))
				return err
			},
			query: "SELECT " + quoteAll(logInsertColumns) + " FROM usage_logs ORDER BY id",
		},
		{
			name: "usage log without other",
			insert: func(st *Store) error {
				return st.Logs().Insert(context.Background(), []store.UsageLog{{Type: store.LogError, Model: "m", CreatedAt: created}})
			},
			bound: func(st *Store) error {
				_, err := st.DB().Exec("INSERT INTO usage_logs ("+logInsertColumns+") VALUES "+rowsSQL(logInsertCols, 1),
					store.LogError, 0, 0, 0, "m", 0, 0, 0, 0, "", nil, dbTime(created), 0, 0)
				return err
			},
			query: "SELECT " + quoteAll(logInsertColumns) + " FROM usage_logs ORDER BY id",
		},
		{
			name: "ledger entry",
			insert: func(st *Store) error {
				return st.Ledger().Apply(context.Background(), []store.LedgerEntry{{Key: awkward, Kind: store.LedgerSettle, UserID: 9,
					TokenID: 8, Delta: math.MinInt64 + 1, TokenDelta: math.MaxInt64, Used: -1, CreatedAt: created, TeamID: 7}})
			},
			bound: func(st *Store) error {
				_, err := st.DB().Exec("INSERT INTO quota_ledger ("+ledgerColumns+") VALUES "+rowsSQL(ledgerCols, 1),
					awkward+"-bound", store.LedgerSettle, 9, 8, int64(math.MinInt64+1), int64(math.MaxInt64), -1, dbTime(created), 7)
				return err
			},
			// Keys are unique, so they are compared on their own below.
			query: "SELECT " + quoteAll(strings.TrimPrefix(ledgerColumns, "idem_key, ")) + " FROM quota_ledger ORDER BY id",
			check: func(t *testing.T, st *Store) {
				var key string
				if err := st.DB().QueryRow("SELECT idem_key FROM quota_ledger WHERE id = 1").Scan(&key); err != nil || key != awkward {
					t.Errorf("stored key %q (%v), want %q", key, err, awkward)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := openSQLite(t)
			if err := tc.insert(st); err != nil {
				t.Fatal(err)
			}
			if err := tc.bound(st); err != nil {
				t.Fatal(err)
			}
			rows := quotedRows(t, st, tc.query)
			if len(rows) != 2 {
				t.Fatalf("got %d rows, want 2", len(rows))
			}
			for i := range rows[0] {
				if rows[0][i] != rows[1][i] {
					t.Errorf("column %d: batch table stored %s, bound arguments %s", i, rows[0][i], rows[1][i])
				}
			}
			if tc.check != nil {
				tc.check(t, st)
			}
		})
	}
}

// TestSQLiteBatchesKeepEveryByte covers strings that JSON or NUL-ended C
// text would alter; the batch table hands them over with their length.
func TestSQLiteBatchesKeepEveryByte(t *testing.T) {
	for name, s := range map[string]string{"invalid UTF-8": "bad\xff\xfe", "NUL byte": "nul\x00inside"} {
		t.Run(name, func(t *testing.T) {
			st := openSQLite(t)
			ctx := context.Background()
			if err := st.Logs().Insert(ctx, []store.UsageLog{{Type: store.LogConsume, Model: "fine"}, {Type: store.LogConsume, Model: s, RequestID: s}}); err != nil {
				t.Fatal(err)
			}
			if err := st.Ledger().Apply(ctx, []store.LedgerEntry{{Key: "fine", UserID: 1, Delta: 1}, {Key: s, Kind: s, UserID: 1, Delta: 2}}); err != nil {
				t.Fatal(err)
			}
			logs, _, err := st.Logs().List(ctx, store.LogFilter{}, store.Page{})
			if err != nil {
				t.Fatal(err)
			}
			if len(logs) != 2 || logs[0].Model != s || logs[0].RequestID != s {
				t.Errorf("logs = %+v", logs)
			}
			entries, _, err := st.Ledger().List(ctx, 1, store.Page{})
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 2 || entries[0].Key != s || entries[0].Kind != s || entries[0].Delta != 2 {
				t.Errorf("entries = %+v", entries)
			}
		})
	}
}

// TestSQLiteBatchesKeepQueueOrder requires the rows of one batch to get ids
// in the order of the queue, which is not the order of their keys.
func TestSQLiteBatchesKeepQueueOrder(t *testing.T) {
	st := openSQLite(t)
	ctx := context.Background()
	const n = 300
	var items []store.BillingItem
	for i := range n {
		key := fmt.Sprintf("k%04d", n-i)
		items = append(items, store.BillingItem{
			Entry: &store.LedgerEntry{Key: key, Kind: store.LedgerSettle, UserID: 1, Delta: int64(i)},
			Log:   &store.UsageLog{Type: store.LogConsume, UserID: 1, Model: "m", RequestID: key},
		})
	}
	written, err := st.WriteItems(ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(written, slices.Repeat([]bool{true}, n)) {
		t.Fatalf("written = %v", written)
	}
	for _, q := range []string{"SELECT request_id FROM usage_logs ORDER BY id", "SELECT idem_key FROM quota_ledger ORDER BY id"} {
		rows := quotedRows(t, st, q)
		if len(rows) != n {
			t.Fatalf("%s: %d rows, want %d", q, len(rows), n)
		}
		for i, r := range rows {
			if want := items[i].Log.RequestID; r[0] != want {
				t.Fatalf("%s: row %d is %s, want %s", q, i, r[0], want)
			}
		}
	}
}
