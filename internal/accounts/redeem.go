package accounts

import (
	"context"
	"database/sql"
	"errors"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// RedemptionPrefix starts every redemption code, so a code pasted into the
// wrong field (an API key box) is recognisable.
const RedemptionPrefix = "tpr-"

// redemptionBody is the length of a code's random part: 32 base32
// characters, 160 bits.
const redemptionBody = 32

// ErrBadCode is what every failed redemption is: unknown, used, expired or
// malformed look the same to the caller, so nobody learns which codes
// exist.
var ErrBadCode = errors.New("accounts: the code is not valid")

// NewRedemptionCode returns a fresh code.
func NewRedemptionCode() string {
	return RedemptionPrefix + codeEncoding.EncodeToString(randomBytes(20))
}

// ParseRedemptionCode normalises a code as typed or pasted (surrounding
// space, letter case) and checks its shape, so malformed input never
// reaches the database.
func ParseRedemptionCode(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	body, ok := strings.CutPrefix(s, RedemptionPrefix)
	if !ok || len(body) != redemptionBody {
		return "", ErrBadCode
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return "", ErrBadCode
		}
	}
	return s, nil
}

// Redemption is a code as lists show it: the code itself is never kept.
type Redemption struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	Code      string     `json:"code"` // masked
	Quota     int64      `json:"quota"`
	State     string     `json:"state"`
	ExpiresAt *time.Time `json:"expires_at"`
	UsedBy    *int64     `json:"used_by"`
	UsedAt    *time.Time `json:"used_at"`
	CreatedAt time.Time  `json:"created_at"`
}

// Redemption states.
const (
	StateUnused  = "unused"
	StateUsed    = "used"
	StateExpired = "expired"
)

// CreateRedemptions stores count new codes worth quota each and returns
// them; this is the only time they exist outside the caller's hands.
func (s *Store) CreateRedemptions(ctx context.Context, name string, quota int64, count int, expires *time.Time, by int64) (codes []string, ids []int64, err error) {
	codes, ids = make([]string, count), make([]int64, count)
	var exp sql.NullInt64
	if expires != nil {
		exp = sql.NullInt64{Int64: expires.Unix(), Valid: true}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	defer tx.Rollback()
	now := s.now().Unix()
	insert := s.q(`INSERT INTO redemptions (name, code_hash, code_hint, quota, expires_unix, created_by, created_unix)
VALUES (?, ?, ?, ?, ?, ?, ?)`)
	for i := range codes {
		codes[i] = NewRedemptionCode()
		hint := codes[i][:len(RedemptionPrefix)+4] + "…"
		if ids[i], err = s.insertID(ctx, tx, insert, name, hashSecret(codes[i]), hint, quota, exp, by, now); err != nil {
			return nil, nil, err
		}
	}
	return codes, ids, tx.Commit()
}

// insertID runs an INSERT and returns the new row's id: through RETURNING
// on PostgreSQL, whose driver has no LastInsertId.
func (s *Store) insertID(ctx context.Context, tx *sql.Tx, query string, args ...any) (int64, error) {
	if s.d == sqlstore.Postgres {
		var id int64
		err := tx.QueryRowContext(ctx, query+" RETURNING id", args...).Scan(&id)
		return id, err
	}
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// ClaimRedemption marks the code used by userID, if it is unused and not
// expired, and returns its id and quota. The one conditional UPDATE is what
// makes a code pay out once however many nodes and requests race for it.
func (s *Store) ClaimRedemption(ctx context.Context, code string, userID int64) (id, quota int64, err error) {
	hash := hashSecret(code)
	now := s.now().Unix()
	res, err := s.db.ExecContext(ctx, s.q(`UPDATE redemptions SET used_by = ?, used_unix = ?
WHERE code_hash = ? AND used_by IS NULL AND (expires_unix IS NULL OR expires_unix > ?)`), userID, now, hash, now)
	n, err := rowsAffected(res, err)
	if err != nil {
		return 0, 0, err
	}
	if n != 1 {
		return 0, 0, ErrBadCode
	}
	err = s.db.QueryRowContext(ctx, s.q("SELECT id, quota FROM redemptions WHERE code_hash = ?"), hash).Scan(&id, &quota)
	return id, quota, err
}

// ReleaseRedemption undoes a claim whose top-up could not be made, so the
// code is not lost to a failure that was not the user's.
func (s *Store) ReleaseRedemption(ctx context.Context, id, userID int64) error {
	_, err := s.db.ExecContext(ctx, s.q("UPDATE redemptions SET used_by = NULL, used_unix = NULL WHERE id = ? AND used_by = ?"), id, userID)
	return err
}

// ListRedemptions lists codes newest first.
func (s *Store) ListRedemptions(ctx context.Context, p store.Page) ([]Redemption, int, error) {
	var total int
	if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM redemptions").Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, name, code_hint, quota, expires_unix, used_by, used_unix, created_unix
FROM redemptions ORDER BY id DESC LIMIT ? OFFSET ?`), p.PageSize, (p.Page-1)*p.PageSize)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	now := s.now()
	out := []Redemption{}
	for rows.Next() {
		var r Redemption
		var exp, usedBy, usedAt sql.NullInt64
		var created int64
		if err := rows.Scan(&r.ID, &r.Name, &r.Code, &r.Quota, &exp, &usedBy, &usedAt, &created); err != nil {
			return nil, 0, err
		}
		r.CreatedAt = time.Unix(created, 0).UTC()
		r.State = StateUnused
		if exp.Valid {
			t := time.Unix(exp.Int64, 0).UTC()
			r.ExpiresAt = &t
			if !t.After(now) {
				r.State = StateExpired
			}
		}
		if usedBy.Valid {
			r.UsedBy, r.State = &usedBy.Int64, StateUsed
			t := time.Unix(usedAt.Int64, 0).UTC()
			r.UsedAt = &t
		}
		out = append(out, r)
	}
	return out, total, rows.Err()
}
