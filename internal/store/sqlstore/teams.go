package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Teams returns the repository of organisations, teams and membership.
func (s *Store) Teams() store.TeamRepo { return teamRepo{s} }

var _ store.TeamRepo = teamRepo{}

type teamRepo struct{ s *Store }

const (
	orgColumns  = "id, name, models, group_name, created_at"
	teamColumns = "id, org_id, name, models, group_name, billing, quota, used_quota, created_at"
)

func scanOrg(row interface{ Scan(...any) error }) (store.Org, error) {
	var o store.Org
	var models sql.NullString
	if err := row.Scan(&o.ID, &o.Name, &models, &o.Group, &o.CreatedAt); err != nil {
		return o, err
	}
	o.CreatedAt = o.CreatedAt.UTC()
	var err error
	o.Models, err = listColumn(models)
	return o, err
}

func scanTeam(row interface{ Scan(...any) error }) (store.Team, error) {
	var t store.Team
	var models sql.NullString
	if err := row.Scan(&t.ID, &t.OrgID, &t.Name, &models, &t.Group, &t.Billing, &t.Quota, &t.UsedQuota, &t.CreatedAt); err != nil {
		return t, err
	}
	t.CreatedAt = t.CreatedAt.UTC()
	var err error
	t.Models, err = listColumn(models)
	return t, err
}

// listColumn reads a JSON list column; NULL is the empty list.
func listColumn(v sql.NullString) ([]string, error) {
	if !v.Valid || v.String == "" {
		return []string{}, nil
	}
	return decodeList(v.String)
}

func (r teamRepo) CreateOrg(ctx context.Context, o *store.Org) error {
	models, err := stringList(o.Models)
	if err != nil {
		return err
	}
	o.CreatedAt = orNow(o.CreatedAt)
	o.ID, err = r.s.insert(ctx, r.s.db, r.s.Rebind("INSERT INTO orgs (name, models, group_name, created_at) VALUES (?, ?, ?, ?)"),
		o.Name, models, o.Group, o.CreatedAt)
	return wrap(err, "create org")
}

func (r teamRepo) GetOrg(ctx context.Context, id int64) (*store.Org, error) {
	o, err := scanOrg(r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT "+orgColumns+" FROM orgs WHERE id = ?"), id))
	if err != nil {
		return nil, wrap(err, "get org")
	}
	return &o, nil
}

func (r teamRepo) ListOrgs(ctx context.Context) ([]store.Org, error) {
	rows, err := r.s.db.QueryContext(ctx, "SELECT "+orgColumns+" FROM orgs ORDER BY id")
	if err != nil {
		return nil, wrap(err, "list orgs")
	}
	out, err := collect(rows, scanOrg)
	return out, wrap(err, "list orgs")
}

func (r teamRepo) UpdateOrg(ctx context.Context, o *store.Org) error {
	models, err := stringList(o.Models)
	if err != nil {
		return err
	}
	return r.s.execOne(ctx, r.s.db, "update org", "UPDATE orgs SET name = ?, models = ?, group_name = ? WHERE id = ?",
		o.Name, models, o.Group, o.ID)
}

func (r teamRepo) DeleteOrg(ctx context.Context, id int64) error {
	return r.s.withTx(ctx, func(tx *sql.Tx) error {
		var n int64
		if err := tx.QueryRowContext(ctx, r.s.Rebind("SELECT COUNT(*) FROM teams WHERE org_id = ?"), id).Scan(&n); err != nil {
			return wrap(err, "delete org")
		}
		if n > 0 {
			return fmt.Errorf("delete org: it still has %d teams: %w", n, store.ErrConflict)
		}
		return r.s.execOne(ctx, tx, "delete org", "DELETE FROM orgs WHERE id = ?", id)
	})
}

func (r teamRepo) CreateTeam(ctx context.Context, t *store.Team) error {
	models, err := stringList(t.Models)
	if err != nil {
		return err
	}
	t.CreatedAt = orNow(t.CreatedAt)
	t.Billing = orDefault(t.Billing, store.BillingOwn)
	t.ID, err = r.s.insert(ctx, r.s.db, r.s.Rebind(`INSERT INTO teams (org_id, name, models, group_name, billing, quota, used_quota, created_at)
VALUES (?, ?, ?, ?, ?, 0, 0, ?)`), t.OrgID, t.Name, models, t.Group, t.Billing, t.CreatedAt)
	t.Quota, t.UsedQuota = 0, 0
	return wrap(err, "create team")
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func (r teamRepo) GetTeam(ctx context.Context, id int64) (*store.Team, error) {
	t, err := scanTeam(r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT "+teamColumns+" FROM teams WHERE id = ?"), id))
	if err != nil {
		return nil, wrap(err, "get team")
	}
	return &t, nil
}

func (r teamRepo) ListTeams(ctx context.Context) ([]store.Team, error) {
	rows, err := r.s.db.QueryContext(ctx, "SELECT "+teamColumns+" FROM teams ORDER BY id")
	if err != nil {
		return nil, wrap(err, "list teams")
	}
	out, err := collect(rows, scanTeam)
	return out, wrap(err, "list teams")
}

func (r teamRepo) UpdateTeam(ctx context.Context, t *store.Team) error {
	models, err := stringList(t.Models)
	if err != nil {
		return err
	}
	return r.s.execOne(ctx, r.s.db, "update team",
		"UPDATE teams SET org_id = ?, name = ?, models = ?, group_name = ?, billing = ? WHERE id = ?",
		t.OrgID, t.Name, models, t.Group, orDefault(t.Billing, store.BillingOwn), t.ID)
}

func (r teamRepo) DeleteTeam(ctx context.Context, id int64) error {
	return r.s.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, r.s.Rebind("UPDATE users SET team_id = 0, team_role = '' WHERE team_id = ?"), id); err != nil {
			return wrap(err, "delete team")
		}
		return r.s.execOne(ctx, tx, "delete team", "DELETE FROM teams WHERE id = ?", id)
	})
}

func (r teamRepo) SetMembership(ctx context.Context, userID, teamID int64, role string) error {
	return r.s.execOne(ctx, r.s.db, "set team", "UPDATE users SET team_id = ?, team_role = ? WHERE id = ?", teamID, role, userID)
}

func (r teamRepo) Members(ctx context.Context, teamID int64) ([]store.User, error) {
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind("SELECT "+userColumns+" FROM users WHERE team_id = ? ORDER BY id"), teamID)
	if err != nil {
		return nil, wrap(err, "team members")
	}
	out, err := collect(rows, scanUser)
	return out, wrap(err, "team members")
}
