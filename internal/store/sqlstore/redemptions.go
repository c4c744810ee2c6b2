package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type redemptionRepo struct{ s *Store }

// Redemptions returns the redemption codes.
func (s *Store) Redemptions() store.RedemptionRepo { return redemptionRepo{s} }

func (r redemptionRepo) Create(ctx context.Context, codes []*store.Redemption) error {
	return wrap(r.s.withTx(ctx, func(tx *sql.Tx) error {
		for _, c := range codes {
			if c.CreatedAt.IsZero() {
				c.CreatedAt = time.Now().UTC()
			}
			id, err := r.s.insert(ctx, tx, r.s.Rebind(`INSERT INTO redemptions (name, code_hash, code_hint, quota, expires_unix, created_by, created_unix)
VALUES (?, ?, ?, ?, ?, ?, ?)`), c.Name, c.CodeHash, c.CodeHint, c.Quota, unixOrNull(c.ExpiresAt), c.CreatedBy, c.CreatedAt.Unix())
			if err != nil {
				return err
			}
			c.ID = id
		}
		return nil
	}), "redemption code")
}

func unixOrNull(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.Unix(), Valid: true}
}

const redemptionColumns = "id, name, code_hash, code_hint, quota, expires_unix, used_by, used_unix, created_by, created_unix"

func (r redemptionRepo) Claim(ctx context.Context, codeHash string, userID int64, now time.Time) (*store.Redemption, error) {
	ok, err := r.s.affected(ctx, "redemption code", `UPDATE redemptions SET used_by = ?, used_unix = ?
WHERE code_hash = ? AND used_by IS NULL AND (expires_unix IS NULL OR expires_unix > ?)`, userID, now.Unix(), codeHash, now.Unix())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notFound("redemption code")
	}
	c, err := scanRedemption(r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT "+redemptionColumns+" FROM redemptions WHERE code_hash = ?"), codeHash))
	return c, wrap(err, "redemption code")
}

func (r redemptionRepo) Release(ctx context.Context, id, userID int64) error {
	_, err := r.s.db.ExecContext(ctx, r.s.Rebind("UPDATE redemptions SET used_by = NULL, used_unix = NULL WHERE id = ? AND used_by = ?"), id, userID)
	return wrap(err, "redemption code")
}

func (r redemptionRepo) List(ctx context.Context, p store.Page) ([]store.Redemption, int, error) {
	var total int
	if err := r.s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM redemptions").Scan(&total); err != nil {
		return nil, 0, wrap(err, "redemption codes")
	}
	limit, offset := limitOffset(p)
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind("SELECT "+redemptionColumns+" FROM redemptions ORDER BY id DESC LIMIT ? OFFSET ?"), limit, offset)
	if err != nil {
		return nil, 0, wrap(err, "redemption codes")
	}
	defer rows.Close()
	out := []store.Redemption{}
	for rows.Next() {
		c, err := scanRedemption(rows)
		if err != nil {
			return nil, 0, wrap(err, "redemption codes")
		}
		out = append(out, *c)
	}
	return out, total, wrap(rows.Err(), "redemption codes")
}

func scanRedemption(row interface{ Scan(...any) error }) (*store.Redemption, error) {
	var c store.Redemption
	var exp, usedBy, usedAt sql.NullInt64
	var created int64
	if err := row.Scan(&c.ID, &c.Name, &c.CodeHash, &c.CodeHint, &c.Quota, &exp, &usedBy, &usedAt, &c.CreatedBy, &created); err != nil {
		return nil, err
	}
	c.CreatedAt = time.Unix(created, 0).UTC()
	if exp.Valid {
		t := time.Unix(exp.Int64, 0).UTC()
		c.ExpiresAt = &t
	}
	if usedBy.Valid {
		c.UsedBy = &usedBy.Int64
		t := time.Unix(usedAt.Int64, 0).UTC()
		c.UsedAt = &t
	}
	return &c, nil
}
