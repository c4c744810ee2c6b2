package plugin

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// MarketplaceSource is one registered marketplace index address.
type MarketplaceSource struct {
	URL       string    `json:"url"`
	CreatedAt time.Time `json:"created_at"`
}

// AuditEntry is one row of the plugin administration audit log.
type AuditEntry struct {
	Actor   string
	Action  string
	Key     string
	Version string
	Outcome string
	Detail  string
}

func (d *db) sources(ctx context.Context) ([]MarketplaceSource, error) {
	rows, err := d.sql.QueryContext(ctx, "SELECT url, created_at FROM plugin_marketplace_sources ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []MarketplaceSource{}
	for rows.Next() {
		var s MarketplaceSource
		if err := rows.Scan(&s.URL, &s.CreatedAt); err != nil {
			return nil, err
		}
		s.CreatedAt = s.CreatedAt.UTC()
		out = append(out, s)
	}
	return out, rows.Err()
}

// addSource stores url; an address already stored is left as it is.
func (d *db) addSource(ctx context.Context, url string) (MarketplaceSource, bool, error) {
	list, err := d.sources(ctx)
	if err != nil {
		return MarketplaceSource{}, false, err
	}
	for _, s := range list {
		if s.URL == url {
			return s, false, nil
		}
	}
	s := MarketplaceSource{URL: url, CreatedAt: now()}
	_, err = d.sql.ExecContext(ctx, d.q("INSERT INTO plugin_marketplace_sources (url, created_at) VALUES (?, ?)"), s.URL, s.CreatedAt)
	if err != nil && isUniqueViolation(err) {
		return s, false, nil
	}
	return s, err == nil, err
}

func (d *db) deleteSource(ctx context.Context, url string) error {
	res, err := d.sql.ExecContext(ctx, d.q("DELETE FROM plugin_marketplace_sources WHERE url = ?"), url)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

func (d *db) hasSource(ctx context.Context, url string) (bool, error) {
	var n int
	err := d.sql.QueryRowContext(ctx, d.q("SELECT COUNT(*) FROM plugin_marketplace_sources WHERE url = ?"), url).Scan(&n)
	return n > 0, err
}

func (d *db) audit(ctx context.Context, e AuditEntry) error {
	if len(e.Detail) > 2000 {
		e.Detail = e.Detail[:2000]
	}
	_, err := d.sql.ExecContext(ctx, d.q(`INSERT INTO plugin_audit (actor, action, plugin_key, version, outcome, detail, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?)`), e.Actor, e.Action, e.Key, e.Version, e.Outcome, e.Detail, now())
	return err
}

// auditLog returns the newest entries first.
func (d *db) auditLog(ctx context.Context, limit int) ([]AuditEntry, error) {
	rows, err := d.sql.QueryContext(ctx, d.q("SELECT actor, action, plugin_key, version, outcome, detail FROM plugin_audit ORDER BY id DESC LIMIT ?"), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		var e AuditEntry
		if err := rows.Scan(&e.Actor, &e.Action, &e.Key, &e.Version, &e.Outcome, &e.Detail); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// isUniqueViolation recognises a duplicate-key error on any of the three
// databases by the words their drivers use.
func isUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, store.ErrConflict) {
		return true
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "unique") || strings.Contains(msg, "duplicate")
}
