package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// plansMigration adds plans (CONTRACT §18): the plans, who holds which
// until when, users whose plan_overflow is not the default, the windows of
// the database path (with Redis they live there), the draws durable work
// holds (a task, a batch) and the Stripe events
// already applied to subscriptions.
var plansMigration = Migration{Version: 150, Name: "plans", SQL: `
CREATE TABLE plans (
	id {{id}},
	name {{string}} NOT NULL,
	price_usd {{float}} NOT NULL,
	period {{string}} NOT NULL,
	windows {{text}} NOT NULL,
	models {{text}} NOT NULL,
	group_names {{text}} NOT NULL,
	priority {{int}} NOT NULL,
	created_at {{time}} NOT NULL,
	updated_at {{time}} NOT NULL,
	CONSTRAINT plans_name_key UNIQUE (name)
) {{options}};
CREATE TABLE plan_grants (
	id {{id}},
	user_id {{bigint}} NOT NULL,
	plan_id {{bigint}} NOT NULL,
	until_at {{time}} NOT NULL,
	source {{string}} NOT NULL,
	subscription {{string}} NOT NULL,
	created_at {{time}} NOT NULL
) {{options}};
CREATE INDEX plan_grants_user_idx ON plan_grants (user_id);
CREATE INDEX plan_grants_subscription_idx ON plan_grants (subscription);
CREATE TABLE plan_overflow (
	user_id {{bigint}} NOT NULL PRIMARY KEY,
	mode {{string}} NOT NULL
) {{options}};
CREATE TABLE plan_windows (
	grant_id {{bigint}} NOT NULL,
	idx {{int}} NOT NULL,
	start_ms {{bigint}} NOT NULL,
	used {{bigint}} NOT NULL,
	PRIMARY KEY (grant_id, idx)
) {{options}};
CREATE TABLE plan_draws (
	hold_key {{string}} NOT NULL PRIMARY KEY,
	grant_id {{bigint}} NOT NULL,
	plan_id {{bigint}} NOT NULL,
	starts {{text}} NOT NULL,
	amount {{bigint}} NOT NULL,
	created_at {{time}} NOT NULL
) {{options}};
CREATE TABLE plan_events (
	event_id {{string}} NOT NULL PRIMARY KEY,
	created_at {{time}} NOT NULL
) {{options}};
`}

type planRepo struct{ s *Store }

// Plans returns the plan repository.
func (s *Store) Plans() store.PlanRepo { return planRepo{s} }

const planCols = "id, name, price_usd, period, windows, models, group_names, priority, created_at, updated_at"

func scanPlan(row interface{ Scan(...any) error }) (store.Plan, error) {
	var p store.Plan
	var wins, models, groups string
	if err := row.Scan(&p.ID, &p.Name, &p.PriceUSD, &p.Period, &wins, &models, &groups, &p.Priority, &p.CreatedAt, &p.UpdatedAt); err != nil {
		return p, err
	}
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	if err := json.Unmarshal([]byte(wins), &p.Windows); err != nil {
		return p, fmt.Errorf("decode plan windows: %w", err)
	}
	var err error
	if p.Models, err = decodeList(models); err != nil {
		return p, err
	}
	p.Groups, err = decodeList(groups)
	return p, err
}

func planArgs(p *store.Plan) (wins, models, groups string, err error) {
	if wins, err = jsonText(p.Windows); err != nil {
		return
	}
	if models, err = stringList(p.Models); err != nil {
		return
	}
	groups, err = stringList(p.Groups)
	return
}

func (r planRepo) List(ctx context.Context) ([]store.Plan, error) {
	rows, err := r.s.db.QueryContext(ctx, "SELECT "+planCols+" FROM plans ORDER BY priority DESC, id")
	if err != nil {
		return nil, wrap(err, "list plans")
	}
	out, err := collect(rows, scanPlan)
	return out, wrap(err, "list plans")
}

func (r planRepo) Get(ctx context.Context, id int64) (*store.Plan, error) {
	p, err := scanPlan(r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT "+planCols+" FROM plans WHERE id = ?"), id))
	if err != nil {
		return nil, wrap(err, "plan")
	}
	return &p, nil
}

func (r planRepo) Create(ctx context.Context, p *store.Plan) error {
	wins, models, groups, err := planArgs(p)
	if err != nil {
		return err
	}
	at := now()
	id, err := r.s.insert(ctx, r.s.db, r.s.Rebind("INSERT INTO plans (name, price_usd, period, windows, models, group_names, priority, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"),
		p.Name, p.PriceUSD, p.Period, wins, models, groups, p.Priority, at, at)
	if err != nil {
		return wrap(err, "create plan")
	}
	p.ID, p.CreatedAt, p.UpdatedAt = id, at, at
	return nil
}

func (r planRepo) Update(ctx context.Context, p *store.Plan) error {
	wins, models, groups, err := planArgs(p)
	if err != nil {
		return err
	}
	at := now()
	if err := r.s.execOne(ctx, r.s.db, "plan", "UPDATE plans SET name = ?, price_usd = ?, period = ?, windows = ?, models = ?, group_names = ?, priority = ?, updated_at = ? WHERE id = ?",
		p.Name, p.PriceUSD, p.Period, wins, models, groups, p.Priority, at, p.ID); err != nil {
		return err
	}
	p.UpdatedAt = at
	return nil
}

// Delete removes the plan with its grants and their windows.
func (r planRepo) Delete(ctx context.Context, id int64) error {
	return r.s.withTx(ctx, func(tx *sql.Tx) error {
		if err := r.s.execOne(ctx, tx, "plan", "DELETE FROM plans WHERE id = ?", id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, r.s.Rebind("DELETE FROM plan_windows WHERE grant_id IN (SELECT id FROM plan_grants WHERE plan_id = ?)"), id); err != nil {
			return wrap(err, "delete plan windows")
		}
		_, err := tx.ExecContext(ctx, r.s.Rebind("DELETE FROM plan_grants WHERE plan_id = ?"), id)
		return wrap(err, "delete plan grants")
	})
}

const grantCols = "id, user_id, plan_id, until_at, source, subscription, created_at"

func scanGrant(row interface{ Scan(...any) error }) (store.PlanGrant, error) {
	var g store.PlanGrant
	err := row.Scan(&g.ID, &g.UserID, &g.PlanID, &g.Until, &g.Source, &g.Subscription, &g.CreatedAt)
	g.Until, g.CreatedAt = g.Until.UTC(), g.CreatedAt.UTC()
	return g, err
}

func (r planRepo) Grants(ctx context.Context, userID int64, since time.Time) ([]store.PlanGrant, error) {
	q, args := "SELECT "+grantCols+" FROM plan_grants WHERE until_at > ?", []any{dbTime(since)}
	if userID != 0 {
		q, args = q+" AND user_id = ?", append(args, userID)
	}
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(q+" ORDER BY id"), args...)
	if err != nil {
		return nil, wrap(err, "list plan grants")
	}
	out, err := collect(rows, scanGrant)
	return out, wrap(err, "list plan grants")
}

func (r planRepo) AddGrant(ctx context.Context, g *store.PlanGrant) error {
	at := now()
	id, err := r.s.insert(ctx, r.s.db, r.s.Rebind("INSERT INTO plan_grants (user_id, plan_id, until_at, source, subscription, created_at) VALUES (?, ?, ?, ?, ?, ?)"),
		g.UserID, g.PlanID, dbTime(g.Until), g.Source, g.Subscription, at)
	if err != nil {
		return wrap(err, "grant plan")
	}
	g.ID, g.CreatedAt, g.Until = id, at, dbTime(g.Until)
	return nil
}

func (r planRepo) DeleteGrant(ctx context.Context, userID, grantID int64) error {
	return r.s.withTx(ctx, func(tx *sql.Tx) error {
		if err := r.s.execOne(ctx, tx, "plan grant", "DELETE FROM plan_grants WHERE id = ? AND user_id = ?", grantID, userID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, r.s.Rebind("DELETE FROM plan_windows WHERE grant_id = ?"), grantID)
		return wrap(err, "delete plan windows")
	})
}

func (r planRepo) Overflows(ctx context.Context) (map[int64]string, error) {
	rows, err := r.s.db.QueryContext(ctx, "SELECT user_id, mode FROM plan_overflow")
	if err != nil {
		return nil, wrap(err, "plan overflow")
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var mode string
		if err := rows.Scan(&id, &mode); err != nil {
			return nil, wrap(err, "plan overflow")
		}
		out[id] = mode
	}
	return out, wrap(rows.Err(), "plan overflow")
}

func (r planRepo) SetOverflow(ctx context.Context, userID int64, mode string) error {
	_, err := r.s.db.ExecContext(ctx, r.s.upsertSQL("plan_overflow", "user_id", []string{"mode"}), userID, mode)
	return wrap(err, "set plan overflow")
}
