package sqlstore

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// On SQLite the billing batches travel as one JSON text that json_each
// unpacks inside the database. The driver prepares a statement again on
// every execution and allocates C memory for every bound argument, so a
// short statement with one argument is far cheaper than multi-row VALUES
// lists, however they are chunked. Rows keep the order of the array, which
// is the order of their ids.

// sqliteTimeLayout is how the driver writes time.Time values with the
// _time_format=sqlite option of sqlitePragmas; rows written through JSON
// must hold exactly the same text so that comparisons and parsing agree.
const sqliteTimeLayout = "2006-01-02 15:04:05.999999999-07:00"

// jsonColumns selects the elements of each row array of the batch.
func jsonColumns(n int) string {
	cols := make([]string, n)
	for i := range cols {
		cols[i] = "row->>" + strconv.Itoa(i)
	}
	return strings.Join(cols, ", ")
}

// The rows are materialised first, in SQLite's binary JSON form, so that
// each row is converted once; referenced straight from json_each, a row
// would be rendered as text and parsed again for every column.
const (
	sqliteRowsCTE = "WITH batch(row, pos) AS MATERIALIZED (SELECT jsonb(value), key FROM json_each(?)) "
	sqliteLogJSON = sqliteRowsCTE + "INSERT INTO usage_logs (" + logInsertColumns + ") SELECT %s FROM batch WHERE true ORDER BY pos"
	// WHERE true keeps the parser from reading ON CONFLICT as a join.
	sqliteLedgerJSON = sqliteRowsCTE + "INSERT INTO quota_ledger (" + ledgerColumns + ") SELECT %s FROM batch WHERE true ORDER BY pos" +
		" ON CONFLICT (idem_key) DO NOTHING RETURNING idem_key"
)

// sqliteMoveJSON moves the balances of a table's accounts, given as rows
// [id, delta, used]. It is filled with the table, its quota expression and
// the table again.
const sqliteMoveJSON = "UPDATE %s SET quota = %s, used_quota = used_quota + (m.value->>2)" +
	" FROM json_each(?) AS m WHERE %s.id = m.value->>0"

// jsonSafe reports whether s survives a trip through SQLite's JSON
// functions byte for byte: JSON cannot carry invalid UTF-8, and SQLite
// text ends at a NUL. Batches with such strings take the bound-argument
// path.
func jsonSafe(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

func logsJSONSafe(logs []store.UsageLog) bool {
	for _, l := range logs {
		if !jsonSafe(l.Type) || !jsonSafe(l.Model) || !jsonSafe(l.RequestID) || !jsonSafe(string(l.Other)) {
			return false
		}
	}
	return true
}

func ledgerJSONSafe(entries []store.LedgerEntry) bool {
	for _, e := range entries {
		if !jsonSafe(e.Key) || !jsonSafe(e.Kind) {
			return false
		}
	}
	return true
}

// appendJSONString appends s as a JSON string; s must be jsonSafe.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		}
		start = i + 1
	}
	return append(append(b, s[start:]...), '"')
}

func appendJSONTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	return append(t.AppendFormat(b, sqliteTimeLayout), '"')
}

// logsJSON encodes logs as an array of rows in logInsertColumns order.
func logsJSON(logs []store.UsageLog, stamp time.Time) string {
	b := make([]byte, 0, len(logs)*160)
	b = append(b, '[')
	for i, l := range logs {
		if i > 0 {
			b = append(b, ',')
		}
		created := stamp
		if !l.CreatedAt.IsZero() {
			created = dbTime(l.CreatedAt)
		}
		b = append(b, '[')
		b = appendJSONString(b, l.Type)
		for _, n := range [...]int64{l.UserID, l.TokenID, l.ChannelID} {
			b = strconv.AppendInt(append(b, ','), n, 10)
		}
		b = appendJSONString(append(b, ','), l.Model)
		for _, n := range [...]int64{int64(l.PromptTokens), int64(l.CompletionTokens), l.Quota, l.LatencyMS} {
			b = strconv.AppendInt(append(b, ','), n, 10)
		}
		b = appendJSONString(append(b, ','), l.RequestID)
		if len(l.Other) == 0 {
			b = append(b, ",null"...)
		} else {
			b = appendJSONString(append(b, ','), string(l.Other))
		}
		b = append(appendJSONTime(append(b, ','), created), ']')
	}
	return string(append(b, ']'))
}

// ledgerJSON encodes entries as an array of rows in ledgerColumns order.
func ledgerJSON(entries []store.LedgerEntry, stamp time.Time) string {
	b := make([]byte, 0, len(entries)*120)
	b = append(b, '[')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		created := stamp
		if !e.CreatedAt.IsZero() {
			created = dbTime(e.CreatedAt)
		}
		b = appendJSONString(append(b, '['), e.Key)
		b = appendJSONString(append(b, ','), e.Kind)
		for _, n := range [...]int64{e.UserID, e.TokenID, e.Delta, e.TokenDelta, e.Used} {
			b = strconv.AppendInt(append(b, ','), n, 10)
		}
		b = append(appendJSONTime(append(b, ','), created), ']')
	}
	return string(append(b, ']'))
}

// balancesJSON encodes the accounts ids as rows [id, delta, used].
func balancesJSON(ids []int64, accounts map[int64]*balance) string {
	b := make([]byte, 0, len(ids)*24)
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		a := accounts[id]
		b = strconv.AppendInt(append(b, '['), id, 10)
		b = strconv.AppendInt(append(b, ','), a.delta, 10)
		b = strconv.AppendInt(append(b, ','), a.used, 10)
		b = append(b, ']')
	}
	return string(append(b, ']'))
}
