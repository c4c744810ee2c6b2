package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type tokenRepo struct{ s *Store }

const tokenSelect = "SELECT id, user_id, name, key_hash, key_masked, quota, used_quota, models, expires_at, status, created_at, prev_key_hash, prev_until, response_cache, log_content FROM tokens"

func scanToken(row interface{ Scan(...any) error }) (store.Token, error) {
	var t store.Token
	var models string
	var expires, prevUntil sql.NullTime
	var prev, cache, lc sql.NullString
	if err := row.Scan(&t.ID, &t.UserID, &t.Name, &t.KeyHash, &t.KeyMasked, &t.Quota, &t.UsedQuota,
		&models, &expires, &t.Status, &t.CreatedAt, &prev, &prevUntil, &cache, &lc); err != nil {
		return t, err
	}
	var err error
	t.Models, err = decodeList(models)
	if err == nil && cache.Valid && cache.String != "" {
		t.ResponseCache = new(store.ResponseCache)
		err = json.Unmarshal([]byte(cache.String), t.ResponseCache)
	}
	if err == nil {
		t.LogContent, err = contentLoggingOf(lc)
	}
	t.ExpiresAt = timePtr(expires)
	t.PrevKeyHash, t.PrevUntil = prev.String, timePtr(prevUntil)
	t.CreatedAt = t.CreatedAt.UTC()
	return t, err
}

// Create inserts t with its initial Quota and UsedQuota and fills in ID,
// CreatedAt (when zero) and an empty Status as enabled. A missing user is
// store.ErrNotFound.
func (r tokenRepo) Create(ctx context.Context, t *store.Token) error {
	models, err := stringList(t.Models)
	if err != nil {
		return err
	}
	cache, err := responseCacheText(t.ResponseCache)
	if err != nil {
		return err
	}
	lc, err := contentLoggingText(t.LogContent)
	if err != nil {
		return err
	}
	t.CreatedAt = orNow(t.CreatedAt)
	t.Status = defaultStatus(t.Status)
	id, err := r.s.insert(ctx, r.s.db,
		"INSERT INTO tokens (user_id, name, key_hash, key_masked, quota, used_quota, models, expires_at, status, created_at, response_cache, log_content) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		t.UserID, t.Name, t.KeyHash, t.KeyMasked, t.Quota, t.UsedQuota, models, nullTime(t.ExpiresAt), t.Status, t.CreatedAt, cache, lc)
	if err != nil {
		return wrap(err, "create token")
	}
	t.ID = id
	return nil
}

func (r tokenRepo) get(ctx context.Context, where string, args ...any) (*store.Token, error) {
	t, err := scanToken(r.s.db.QueryRowContext(ctx, r.s.Rebind(tokenSelect+" WHERE "+where), args...))
	if err != nil {
		return nil, wrap(err, "get token")
	}
	return &t, nil
}

func (r tokenRepo) Get(ctx context.Context, id int64) (*store.Token, error) {
	return r.get(ctx, "id = ?", id)
}

// GetByHash tries the current hashes first: that is every request but the
// few made with a key in its rotation grace.
func (r tokenRepo) GetByHash(ctx context.Context, keyHash string) (*store.Token, error) {
	t, err := r.get(ctx, "key_hash = ?", keyHash)
	if errors.Is(err, store.ErrNotFound) {
		return r.get(ctx, "prev_key_hash = ?", keyHash)
	}
	return t, err
}

func (r tokenRepo) GetByName(ctx context.Context, userID int64, name string) (*store.Token, error) {
	return r.get(ctx, "user_id = ? AND name = ?", userID, name)
}

func (r tokenRepo) List(ctx context.Context, userID int64, p store.Page) ([]store.Token, int, error) {
	return r.ListFiltered(ctx, store.TokenFilter{UserID: userID}, p)
}

func (r tokenRepo) ListFiltered(ctx context.Context, f store.TokenFilter, p store.Page) ([]store.Token, int, error) {
	where, args := tokenWhere(f)
	total, err := r.s.count(ctx, "SELECT COUNT(*) FROM tokens"+where, args...)
	if err != nil {
		return nil, 0, wrap(err, "count tokens")
	}
	limit, offset := limitOffset(p)
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(tokenSelect+where+" ORDER BY id LIMIT ? OFFSET ?"), append(args, limit, offset)...)
	if err != nil {
		return nil, 0, wrap(err, "list tokens")
	}
	out, err := collect(rows, scanToken)
	if err != nil {
		return nil, 0, wrap(err, "list tokens")
	}
	return out, total, nil
}

func tokenWhere(f store.TokenFilter) (string, []any) {
	var conds []string
	var args []any
	if f.UserID != 0 {
		conds, args = append(conds, "user_id = ?"), append(args, f.UserID)
	}
	if len(f.OwnerRoles) > 0 {
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(f.OwnerRoles)), ", ")
		conds = append(conds, "(user_id = ? OR user_id IN (SELECT id FROM users WHERE role IN ("+marks+")))")
		args = append(args, f.Self)
		for _, role := range f.OwnerRoles {
			args = append(args, role)
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func (r tokenRepo) Update(ctx context.Context, t *store.Token) error {
	models, err := stringList(t.Models)
	if err != nil {
		return err
	}
	cache, err := responseCacheText(t.ResponseCache)
	if err != nil {
		return err
	}
	lc, err := contentLoggingText(t.LogContent)
	if err != nil {
		return err
	}
	return r.s.execOne(ctx, r.s.db, "update token",
		"UPDATE tokens SET name = ?, models = ?, expires_at = ?, status = ?, response_cache = ?, log_content = ? WHERE id = ?",
		t.Name, models, nullTime(t.ExpiresAt), defaultStatus(t.Status), cache, lc, t.ID)
}

// SetQuota overwrites the remaining quota outside the ledger; see
// store.TokenRepo.
func (r tokenRepo) SetQuota(ctx context.Context, id, quota int64) error {
	if quota < -1 {
		return fmt.Errorf("set token quota: %d is neither -1 (unlimited) nor a remaining quota", quota)
	}
	return r.s.execOne(ctx, r.s.db, "set token quota", "UPDATE tokens SET quota = ? WHERE id = ?", quota, id)
}

func (r tokenRepo) Delete(ctx context.Context, id int64) error {
	return r.s.execOne(ctx, r.s.db, "delete token", "DELETE FROM tokens WHERE id = ?", id)
}

// responseCacheText is the response_cache column of a key: NULL when the
// key leaves the cache to its models.
func responseCacheText(rc *store.ResponseCache) (any, error) {
	if rc == nil {
		return nil, nil
	}
	return jsonText(rc)
}

// contentLoggingText is the log_content column of a key or group: NULL
// when it has no setting of its own.
func contentLoggingText(lc *store.ContentLogging) (any, error) {
	if lc == nil {
		return nil, nil
	}
	return jsonText(lc)
}

// contentLoggingOf reads a log_content column.
func contentLoggingOf(v sql.NullString) (*store.ContentLogging, error) {
	if !v.Valid || v.String == "" {
		return nil, nil
	}
	lc := new(store.ContentLogging)
	return lc, json.Unmarshal([]byte(v.String), lc)
}
