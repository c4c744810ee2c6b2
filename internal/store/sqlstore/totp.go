package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type totpRepo struct{ s *Store }

// TOTP returns the second factors and their recovery codes.
func (s *Store) TOTP() store.TOTPRepo { return totpRepo{s} }

func (r totpRepo) Get(ctx context.Context, userID int64) (*store.TOTP, error) {
	t := store.TOTP{UserID: userID}
	var enabled int
	err := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT secret, enabled, last_step FROM user_totp WHERE user_id = ?"), userID).
		Scan(&t.Secret, &enabled, &t.LastStep)
	if err != nil {
		return nil, wrap(err, "second factor")
	}
	t.Enabled = enabled == 1
	return &t, nil
}

func (r totpRepo) Begin(ctx context.Context, userID int64, sealedSecret string, at time.Time) error {
	return wrap(r.s.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, r.s.Rebind("DELETE FROM user_totp WHERE user_id = ? AND enabled = 0"), userID); err != nil {
			return err
		}
		// An enabled row survives the delete, and the primary key then
		// refuses the insert: ErrConflict.
		_, err := tx.ExecContext(ctx, r.s.Rebind("INSERT INTO user_totp (user_id, secret, enabled, last_step, updated_unix) VALUES (?, ?, 0, 0, ?)"),
			userID, sealedSecret, at.Unix())
		return err
	}), "second factor")
}

func (r totpRepo) Enable(ctx context.Context, userID int64, codeHashes []string, at time.Time) (bool, error) {
	enabled := false
	err := r.s.withTx(ctx, func(tx *sql.Tx) error {
		enabled = false
		res, err := tx.ExecContext(ctx, r.s.Rebind("UPDATE user_totp SET enabled = 1, updated_unix = ? WHERE user_id = ? AND enabled = 0"),
			at.Unix(), userID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return err
		}
		if _, err := tx.ExecContext(ctx, r.s.Rebind("DELETE FROM user_recovery_codes WHERE user_id = ?"), userID); err != nil {
			return err
		}
		for _, h := range codeHashes {
			if _, err := tx.ExecContext(ctx, r.s.Rebind("INSERT INTO user_recovery_codes (user_id, code_hash) VALUES (?, ?)"), userID, h); err != nil {
				return err
			}
		}
		enabled = true
		return nil
	})
	return enabled, wrap(err, "second factor")
}

func (r totpRepo) SpendStep(ctx context.Context, userID, step int64) (bool, error) {
	return r.s.affected(ctx, "second factor", "UPDATE user_totp SET last_step = ? WHERE user_id = ? AND enabled = 1 AND last_step < ?", step, userID, step)
}

func (r totpRepo) SpendRecovery(ctx context.Context, userID int64, codeHash string, at time.Time) (bool, error) {
	return r.s.affected(ctx, "recovery code", "UPDATE user_recovery_codes SET used_unix = ? WHERE user_id = ? AND code_hash = ? AND used_unix IS NULL",
		at.Unix(), userID, codeHash)
}

func (r totpRepo) RecoveryLeft(ctx context.Context, userID int64) (int, error) {
	var n int
	err := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT COUNT(*) FROM user_recovery_codes WHERE user_id = ? AND used_unix IS NULL"), userID).Scan(&n)
	return n, wrap(err, "recovery codes")
}

func (r totpRepo) Delete(ctx context.Context, userID int64) error {
	return wrap(r.s.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, r.s.Rebind("DELETE FROM user_totp WHERE user_id = ?"), userID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, r.s.Rebind("DELETE FROM user_recovery_codes WHERE user_id = ?"), userID)
		return err
	}), "second factor")
}

// affected runs a conditional UPDATE and reports whether it touched a row.
func (s *Store) affected(ctx context.Context, what, query string, args ...any) (bool, error) {
	res, err := s.db.ExecContext(ctx, s.Rebind(query), args...)
	if err != nil {
		return false, wrap(err, what)
	}
	n, err := res.RowsAffected()
	return n >= 1, wrap(err, what)
}
