package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type auditRepo struct{ s *Store }

// Audit returns the audit log.
func (s *Store) Audit() store.AuditRepo { return auditRepo{s} }

func (r auditRepo) Insert(ctx context.Context, e store.AuditEntry) error {
	_, err := r.s.db.ExecContext(ctx, r.s.Rebind(`INSERT INTO audit_log (created_ms, user_id, username, role, method, path, target, status, outcome, request_id, client_ip)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), e.CreatedAt.UnixMilli(), e.UserID, clip(e.Username), clip(e.Role), clip(e.Method),
		clip(e.Path), clip(e.Target), e.Status, e.Outcome, clip(e.RequestID), clip(e.ClientIP))
	return wrap(err, "audit entry")
}

// clip keeps a value within the column (255 characters on MySQL) without
// cutting a UTF-8 sequence.
func clip(s string) string {
	if len(s) <= 200 {
		return s
	}
	s = s[:200]
	for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xC0 {
		s = s[:len(s)-1]
	}
	return s
}

func (r auditRepo) List(ctx context.Context, f store.AuditFilter, p store.Page) ([]store.AuditEntry, int, error) {
	var where []string
	var args []any
	add := func(cond string, v any) { where = append(where, cond); args = append(args, v) }
	if f.UserID != 0 {
		add("user_id = ?", f.UserID)
	}
	if f.Username != "" {
		add("username = ?", f.Username)
	}
	if f.Method != "" {
		add("method = ?", strings.ToUpper(f.Method))
	}
	if f.PathPrefix != "" {
		add("path LIKE ? ESCAPE '!'", likePrefix(f.PathPrefix))
	}
	if !f.Since.IsZero() {
		add("created_ms >= ?", f.Since.UnixMilli())
	}
	if !f.Until.IsZero() {
		add("created_ms < ?", f.Until.UnixMilli())
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	var total int
	if err := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT COUNT(*) FROM audit_log"+cond), args...).Scan(&total); err != nil {
		return nil, 0, wrap(err, "audit log")
	}
	limit, offset := limitOffset(p)
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(`SELECT id, created_ms, user_id, username, role, method, path, target, status, outcome, request_id, client_ip
FROM audit_log`+cond+" ORDER BY id DESC LIMIT ? OFFSET ?"), append(args, limit, offset)...)
	if err != nil {
		return nil, 0, wrap(err, "audit log")
	}
	defer rows.Close()
	out := []store.AuditEntry{}
	for rows.Next() {
		var e store.AuditEntry
		var ms int64
		if err := rows.Scan(&e.ID, &ms, &e.UserID, &e.Username, &e.Role, &e.Method, &e.Path, &e.Target, &e.Status,
			&e.Outcome, &e.RequestID, &e.ClientIP); err != nil {
			return nil, 0, wrap(err, "audit log")
		}
		e.CreatedAt = time.UnixMilli(ms).UTC()
		e.TargetID = e.Target
		out = append(out, e)
	}
	return out, total, wrap(rows.Err(), "audit log")
}

// likePrefix escapes LIKE's wildcards (with '!', which every dialect
// accepts as an ESCAPE character) so a prefix matches literally.
func likePrefix(p string) string {
	r := strings.NewReplacer("!", "!!", "%", "!%", "_", "!_")
	return r.Replace(p) + "%"
}
