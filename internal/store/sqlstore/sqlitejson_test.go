package sqlstore

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
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

// TestSQLiteJSONRowsEqualBoundRows writes the same values once through the
// JSON statements and once through bound arguments, and requires identical
// stored values and types, so that readers and filters cannot tell them
// apart.
func TestSQLiteJSONRowsEqualBoundRows(t *testing.T) {
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
					RequestID: awkward, Other: json.RawMessage(`{"k":"v\"\\\n","n":[1,2]}`), CreatedAt: created}})
			},
			bound: func(st *Store) error {
				_, err := st.DB().Exec("INSERT INTO usage_logs ("+logInsertColumns+") VALUES "+rowsSQL(logInsertCols, 1),
					store.LogConsume, int64(math.MaxInt64), int64(math.MinInt64), -3, awkward, 1<<40, -7, 0, 12, awkward,
					`{"k":"v\"\\\n","n":[1,2]}`, dbTime(created))
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
					store.LogError, 0, 0, 0, "m", 0, 0, 0, 0, "", nil, dbTime(created))
				return err
			},
			query: "SELECT " + quoteAll(logInsertColumns) + " FROM usage_logs ORDER BY id",
		},
		{
			name: "ledger entry",
			insert: func(st *Store) error {
				return st.Ledger().Apply(context.Background(), []store.LedgerEntry{{Key: awkward, Kind: store.LedgerSettle, UserID: 9,
					TokenID: 8, Delta: math.MinInt64 + 1, TokenDelta: math.MaxInt64, Used: -1, CreatedAt: created}})
			},
			bound: func(st *Store) error {
				_, err := st.DB().Exec("INSERT INTO quota_ledger ("+ledgerColumns+") VALUES "+rowsSQL(ledgerCols, 1),
					awkward+"-bound", store.LedgerSettle, 9, 8, int64(math.MinInt64+1), int64(math.MaxInt64), -1, dbTime(created))
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
					t.Errorf("column %d: JSON path stored %s, bound arguments %s", i, rows[0][i], rows[1][i])
				}
			}
			if tc.check != nil {
				tc.check(t, st)
			}
		})
	}
}

// TestSQLiteBatchesJSONCannotCarryKeepEveryByte covers the fallback to bound
// arguments for strings that JSON or SQLite text would alter.
func TestSQLiteBatchesJSONCannotCarryKeepEveryByte(t *testing.T) {
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

func FuzzAppendJSONString(f *testing.F) {
	for _, seed := range []string{"", "plain", `"quoted"`, `back\slash`, "line\nbreak\r\ttab", "\x01\x1f\x7f", "é✓𝄞", "\u2028\u2029", "</script>"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !jsonSafe(s) {
			t.Skip()
		}
		enc := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(enc, &back); err != nil {
			t.Fatalf("%q encodes as invalid JSON %s: %v", s, enc, err)
		}
		if back != s {
			t.Fatalf("%q comes back as %q", s, back)
		}
	})
}
