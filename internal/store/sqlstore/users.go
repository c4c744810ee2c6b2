package sqlstore

import (
	"context"
	"database/sql"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type userRepo struct{ s *Store }

const userColumns = "id, username, password_hash, role, grp, quota, used_quota, status, created_at, team_id, team_role"

func scanUser(row interface{ Scan(...any) error }) (store.User, error) {
	var u store.User
	err := row.Scan(&u.ID, &u.Username, &u.PasswordHash, &u.Role, &u.Group, &u.Quota, &u.UsedQuota, &u.Status, &u.CreatedAt, &u.TeamID, &u.TeamRole)
	u.CreatedAt = u.CreatedAt.UTC()
	return u, err
}

// Create inserts u with its initial Quota and UsedQuota and fills in ID,
// CreatedAt (when zero) and an empty Status as enabled.
func (r userRepo) Create(ctx context.Context, u *store.User) error {
	u.CreatedAt = orNow(u.CreatedAt)
	u.Status = defaultStatus(u.Status)
	id, err := r.s.insert(ctx, r.s.db,
		"INSERT INTO users (username, password_hash, role, grp, quota, used_quota, status, created_at, team_id, team_role) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		u.Username, u.PasswordHash, u.Role, u.Group, u.Quota, u.UsedQuota, u.Status, u.CreatedAt, u.TeamID, u.TeamRole)
	if err != nil {
		return wrap(err, "create user")
	}
	u.ID = id
	return nil
}

func (r userRepo) get(ctx context.Context, what, where string, arg any) (*store.User, error) {
	row := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT "+userColumns+" FROM users WHERE "+where), arg)
	u, err := scanUser(row)
	if err != nil {
		return nil, wrap(err, what)
	}
	return &u, nil
}

func (r userRepo) Get(ctx context.Context, id int64) (*store.User, error) {
	return r.get(ctx, "get user", "id = ?", id)
}

func (r userRepo) GetByUsername(ctx context.Context, username string) (*store.User, error) {
	return r.get(ctx, "get user", "username = ?", username)
}

func (r userRepo) List(ctx context.Context, p store.Page) ([]store.User, int, error) {
	total, err := r.s.count(ctx, "SELECT COUNT(*) FROM users")
	if err != nil {
		return nil, 0, wrap(err, "count users")
	}
	limit, offset := limitOffset(p)
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind("SELECT "+userColumns+" FROM users ORDER BY id LIMIT ? OFFSET ?"), limit, offset)
	if err != nil {
		return nil, 0, wrap(err, "list users")
	}
	out, err := collect(rows, scanUser)
	if err != nil {
		return nil, 0, wrap(err, "list users")
	}
	return out, total, nil
}

func (r userRepo) Update(ctx context.Context, u *store.User) error {
	return r.s.execOne(ctx, r.s.db, "update user",
		"UPDATE users SET username = ?, password_hash = ?, role = ?, grp = ?, status = ? WHERE id = ?",
		u.Username, u.PasswordHash, u.Role, u.Group, defaultStatus(u.Status), u.ID)
}

// Delete removes the user and, through the foreign key, its tokens. Usage
// logs and ledger rows stay as history.
func (r userRepo) Delete(ctx context.Context, id int64) error {
	return r.s.execOne(ctx, r.s.db, "delete user", "DELETE FROM users WHERE id = ?", id)
}

// collect scans every row with scan and closes rows.
func collect[T any](rows *sql.Rows, scan func(interface{ Scan(...any) error }) (T, error)) ([]T, error) {
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
