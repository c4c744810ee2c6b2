package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// trafficMigration adds the tables of traffic control (CONTRACT.md §10):
// limit specs per subject, the exactly-once marks of alerts, and runtime
// settings changed through the admin API. The usage log gains an index for
// summing a subject's spending in the current period.
var trafficMigration = Migration{
	Version: 30,
	Name:    "traffic control",
	SQL: `
CREATE TABLE traffic_limits (
	kind {{string}} NOT NULL,
	subject {{string}} NOT NULL,
	spec {{text}} NOT NULL,
	PRIMARY KEY (kind, subject)
) {{options}};

CREATE TABLE traffic_notices (
	notice_key {{string}} NOT NULL PRIMARY KEY,
	created_at {{time}} NOT NULL
) {{options}};

CREATE TABLE gateway_settings (
	name {{string}} NOT NULL PRIMARY KEY,
	value {{text}} NOT NULL
) {{options}};

CREATE INDEX usage_logs_user_created_idx ON usage_logs (user_id, created_at);
CREATE INDEX usage_logs_token_created_idx ON usage_logs (token_id, created_at);
`,
}

// Traffic returns the repository of traffic control.
func (s *Store) Traffic() store.TrafficRepo { return trafficRepo{s} }

var _ store.TrafficRepo = trafficRepo{}

type trafficRepo struct{ s *Store }

func (r trafficRepo) Limits(ctx context.Context) ([]store.LimitRow, error) {
	rows, err := r.s.pollQuery(ctx, "SELECT kind, subject, spec FROM traffic_limits")
	if err != nil {
		return nil, wrap(err, "list limits")
	}
	out, err := collect(rows, func(row interface{ Scan(...any) error }) (store.LimitRow, error) {
		var l store.LimitRow
		var spec string
		err := row.Scan(&l.Kind, &l.Subject, &spec)
		l.Spec = json.RawMessage(spec)
		return l, err
	})
	return out, wrap(err, "list limits")
}

func (r trafficRepo) PutLimits(ctx context.Context, kind, subject string, spec json.RawMessage) error {
	if len(spec) == 0 {
		_, err := r.s.db.ExecContext(ctx, r.s.Rebind("DELETE FROM traffic_limits WHERE kind = ? AND subject = ?"), kind, subject)
		return wrap(err, "delete limits")
	}
	q := "INSERT INTO traffic_limits (kind, subject, spec) VALUES (?, ?, ?)"
	if r.s.dialect == MySQL {
		q += " ON DUPLICATE KEY UPDATE spec = VALUES(spec)"
	} else {
		q = r.s.Rebind(q + " ON CONFLICT (kind, subject) DO UPDATE SET spec = excluded.spec")
	}
	_, err := r.s.db.ExecContext(ctx, q, kind, subject, string(spec))
	return wrap(err, "put limits")
}

// spentColumns is the usage log's column of each subject kind a period
// budget may belong to.
var spentColumns = map[string]string{store.SubjectUser: "user_id", store.SubjectToken: "token_id",
	store.SubjectTeam: "team_id", store.SubjectOrg: "org_id"}

func (r trafficRepo) PeriodSpent(ctx context.Context, kind string, id int64, since time.Time) (int64, error) {
	col, ok := spentColumns[kind]
	if !ok {
		return 0, fmt.Errorf("sum period spending: unknown subject kind %q", kind)
	}
	// Holds name their team, not its organisation: an organisation's
	// holds are those of its teams.
	holdsWhere := col + " = ?"
	if kind == store.SubjectOrg {
		holdsWhere = "team_id <> 0 AND team_id IN (SELECT id FROM teams WHERE org_id = ?)"
	}
	// One statement, so a batch billed meanwhile (its hold closed and its
	// row written in one transaction) is counted once.
	// A row a plan paid (its other.plan) spent no money: the budgets never
	// counted it at admission or settlement, so their sum from the rows
	// leaves it out too (CONTRACT §10, §18).
	var sum int64
	err := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT COALESCE((SELECT SUM(CASE WHEN other LIKE ? THEN 0 ELSE quota END) FROM usage_logs WHERE "+teamCond(col)+" AND type = ? AND created_at >= ?), 0)"+
		" + COALESCE((SELECT SUM(amount) FROM billing_holds WHERE "+holdsWhere+" AND owner = '' AND hold_key LIKE '"+store.BatchHoldPrefix+"%' AND created_at >= ?), 0)"),
		"%"+store.PlanMarker+"%", id, store.LogConsume, dbTime(since), id, since.UnixMilli()).Scan(&sum)
	return sum, wrap(err, "sum period spending")
}

func (r trafficRepo) Granted(ctx context.Context, userID int64) (int64, error) {
	var sum int64
	err := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT COALESCE(SUM(delta), 0) FROM quota_ledger WHERE user_id = ? AND kind = ?"),
		userID, store.LedgerTopUp).Scan(&sum)
	return sum, wrap(err, "sum top-ups")
}

func (r trafficRepo) ClaimNotice(ctx context.Context, key string) (bool, error) {
	_, err := r.s.db.ExecContext(ctx, r.s.Rebind("INSERT INTO traffic_notices (notice_key, created_at) VALUES (?, ?)"), key, now())
	if err == nil {
		return true, nil
	}
	if err = wrap(err, "claim notice"); errors.Is(err, store.ErrConflict) {
		return false, nil
	}
	return false, err
}

func (r trafficRepo) Setting(ctx context.Context, name string) (string, bool, error) {
	var v string
	err := r.s.pollQueryRow(ctx, "SELECT value FROM gateway_settings WHERE name = ?", name).Scan(&v)
	if err != nil {
		if err = wrap(err, "get setting"); errors.Is(err, store.ErrNotFound) {
			return "", false, nil
		}
		return "", false, err
	}
	return v, true, nil
}

func (r trafficRepo) PutSetting(ctx context.Context, name, value string) error {
	q := "INSERT INTO gateway_settings (name, value) VALUES (?, ?)"
	if r.s.dialect == MySQL {
		q += " ON DUPLICATE KEY UPDATE value = VALUES(value)"
	} else {
		q = r.s.Rebind(q + " ON CONFLICT (name) DO UPDATE SET value = excluded.value")
	}
	_, err := r.s.db.ExecContext(ctx, q, name, value)
	return wrap(err, "put setting")
}
