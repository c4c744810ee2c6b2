package books_test

import (
	"fmt"
	"testing"
	"time"
)

// scaleTopUp is each seeded user's first balance, recorded as a top-up a
// day before the seeded span (its entry and its row, as billing.Credit
// writes them).
const scaleTopUp = 1_000_000_000_000

// seedLedger gives the seeded rows the ledger a live gateway writes beside
// them, server-side, a million rows a statement, once: the users and their
// keys (unlimited), each user's top-up, and per row of the span
//   - a consume row: its call's reserve (at the row's time less its
//     latency, 500 units more than the charge) and its settle (at the
//     row's time, the charge used and the 500 given back); one call in
//     three ended within the writer's batch, stored as one entry under the
//     reserve's key with the settle's kind (itemTx.pairUp);
//   - an error row: the call's reserve of 1000 and its refund;
//   - a refund row: a task's refund (its key "task-…", booked as it comes).
//
// The balances are the ledger's sums, so every account reconciles. Its
// entries are written unmarked, as the billing writer writes them; their
// books buckets are summed after (RebuildBooksRollups).
// It reports whether it seeded.
func seedLedger(b *testing.B, exec func(string, ...any) error, count func(string) int, end time.Time) bool {
	if count("SELECT COUNT(*) FROM users") > 0 {
		return false
	}
	start := time.Now()
	topUp := end.Add(-121 * 24 * time.Hour)
	maxID := count("SELECT COALESCE(MAX(id), 0) FROM usage_logs")
	for lo := 0; lo <= maxID; lo += 1_000_000 {
		err := exec(`INSERT INTO quota_ledger (idem_key, kind, user_id, token_id, delta, token_delta, used, created_at, team_id, rollup_pending)
		SELECT 'call-' || id || ':reserve', CASE WHEN type = 'consume' AND id % 3 = 0 THEN 'settle' WHEN type = 'refund' THEN 'refund' ELSE 'reserve' END,
			user_id, token_id, d, d, CASE WHEN type = 'consume' AND id % 3 = 0 THEN quota ELSE 0 END,
			CASE WHEN type = 'consume' AND id % 3 = 0 THEN created_at ELSE created_at - latency_ms * interval '1 millisecond' END, 0, NULL::smallint
		FROM (SELECT id, type, user_id, token_id, quota, created_at, latency_ms,
			CASE WHEN type = 'error' THEN -1000 WHEN type = 'refund' THEN quota WHEN id % 3 = 0 THEN -quota ELSE -quota - 500 END AS d
			FROM usage_logs WHERE id >= $1 AND id < $2 AND type IN ('consume', 'error', 'refund')) r
		WHERE type <> 'refund'
		UNION ALL
		SELECT CASE WHEN type = 'refund' THEN 'task-' || id || ':refund' WHEN type = 'error' THEN 'call-' || id || ':refund' ELSE 'call-' || id || ':settle' END,
			CASE WHEN type = 'consume' THEN 'settle' ELSE 'refund' END, user_id, token_id,
			CASE WHEN type = 'consume' THEN 500 WHEN type = 'error' THEN 1000 ELSE quota END,
			CASE WHEN type = 'consume' THEN 500 WHEN type = 'error' THEN 1000 ELSE quota END,
			CASE WHEN type = 'consume' THEN quota ELSE 0 END, created_at, 0, NULL
		FROM usage_logs WHERE id >= $1 AND id < $2 AND (type IN ('error', 'refund') OR (type = 'consume' AND id % 3 <> 0))`, lo, lo+1_000_000)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Printf("seeded the ledger of the rows below id %d (%.0f s)\n", lo+1_000_000, time.Since(start).Seconds())
	}
	for _, q := range []string{
		`INSERT INTO quota_ledger (idem_key, kind, user_id, token_id, delta, token_delta, used, created_at, team_id, rollup_pending)
		SELECT 'topup-' || u, 'topup', u, 0, $1, 0, 0, $2, 0, NULL FROM generate_series(1, 200) AS u`,
		`INSERT INTO usage_logs (type, user_id, token_id, channel_id, model, prompt_tokens, completion_tokens, quota, latency_ms,
			request_id, other, created_at, team_id, org_id, rollup_pending)
		SELECT 'topup', u, 0, 0, '', 0, 0, $1, 0, 'topup-' || u, '{}', $2, 0, 0, NULL FROM generate_series(1, 200) AS u`,
		`INSERT INTO usage_rollups (hour, day, user_id, token_id, model, channel_id, team_id, type, requests, input_tokens, output_tokens,
			cache_read_tokens, quota, upstream_cost_pico, errors)
		SELECT $2, $2, u, 0, '', 0, 0, 'topup', 1, 0, 0, 0, $1, 0, 0 FROM generate_series(1, 200) AS u`,
		`INSERT INTO usage_rollups_daily (day, user_id, token_id, model, channel_id, team_id, type, requests, input_tokens, output_tokens,
			cache_read_tokens, quota, upstream_cost_pico, errors)
		SELECT $2, u, 0, '', 0, 0, 'topup', 1, 0, 0, 0, $1, 0, 0 FROM generate_series(1, 200) AS u`,
	} {
		if err := exec(q, scaleTopUp, topUp); err != nil {
			b.Fatal(err)
		}
	}
	for _, q := range []string{
		`INSERT INTO users (id, username, password_hash, role, grp, quota, used_quota, status, created_at)
		SELECT user_id, 'user-' || user_id, '', 'user', 'default', SUM(delta), 0, 'active', $1
		FROM quota_ledger WHERE team_id = 0 GROUP BY user_id`,
		`INSERT INTO tokens (id, user_id, name, key_hash, key_masked, quota, used_quota, models, status, created_at)
		SELECT t, t / 2, 'key-' || t, 'hash-' || t, 'sk-…' || t, -1, 0, '', 'active', $1 FROM generate_series(2, 401) AS t`,
		`VACUUM ANALYZE quota_ledger`, `VACUUM ANALYZE users`, `VACUUM ANALYZE tokens`,
	} {
		var err error
		if q[0] == 'I' {
			err = exec(q, topUp)
		} else {
			err = exec(q)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	fmt.Printf("seeded the ledger, users and keys in %.0f s\n", time.Since(start).Seconds())
	return true
}
