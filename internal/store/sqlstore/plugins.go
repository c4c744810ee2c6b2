package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// pluginRepo keeps the task plugin tables. Writes that change what the
// runtime serves bump the revision in the same transaction.
type pluginRepo struct{ s *Store }

// Plugins returns the task plugin repository.
func (s *Store) Plugins() store.PluginRepo { return pluginRepo{s} }

var _ store.PluginRepo = pluginRepo{}

func pluginNow() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// newRevision makes a revision that sorts by time and never repeats, so two
// nodes bumping at once still produce different values.
func newRevision() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%013x-%s", time.Now().UnixMilli(), hex.EncodeToString(b[:]))
}

func (r pluginRepo) tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := r.s.db.BeginTx(ctx, nil)
	if err != nil {
		return wrap(err, "plugin write")
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return wrap(err, "plugin write")
	}
	return wrap(tx.Commit(), "plugin write")
}

func (r pluginRepo) bump(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, r.s.Rebind("UPDATE plugin_runtime SET revision = ?, updated_at = ? WHERE id = 1"), newRevision(), pluginNow())
	return err
}

func (r pluginRepo) Revision(ctx context.Context) (string, error) {
	var rev string
	err := r.s.db.QueryRowContext(ctx, "SELECT revision FROM plugin_runtime WHERE id = 1").Scan(&rev)
	return rev, err
}

func (r pluginRepo) States(ctx context.Context) ([]store.PluginState, error) {
	rows, err := r.s.db.QueryContext(ctx, "SELECT plugin_key, active_version, enabled, held_back FROM plugin_state ORDER BY plugin_key")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.PluginState
	for rows.Next() {
		var s store.PluginState
		var en, held int
		if err := rows.Scan(&s.Key, &s.ActiveVersion, &en, &held); err != nil {
			return nil, err
		}
		s.Enabled, s.HeldBack = en != 0, held != 0
		out = append(out, s)
	}
	return out, rows.Err()
}

func (r pluginRepo) State(ctx context.Context, key string) (*store.PluginState, error) {
	s := store.PluginState{Key: key}
	var en, held int
	err := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT active_version, enabled, held_back FROM plugin_state WHERE plugin_key = ?"), key).
		Scan(&s.ActiveVersion, &en, &held)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	s.Enabled, s.HeldBack = en != 0, held != 0
	return &s, nil
}

const versionColumns = "plugin_key, version, sha256, origin, origin_url, uploaded_by, created_at, icon IS NOT NULL"

func scanVersion(sc interface{ Scan(...any) error }) (store.PluginVersion, error) {
	var v store.PluginVersion
	err := sc.Scan(&v.Key, &v.Version, &v.SHA256, &v.Origin, &v.OriginURL, &v.UploadedBy, &v.CreatedAt, &v.HasIcon)
	v.CreatedAt = v.CreatedAt.UTC()
	return v, err
}

// versions lists a key's stored versions, oldest first.
func (r pluginRepo) Versions(ctx context.Context, key string) ([]store.PluginVersion, error) {
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind("SELECT "+versionColumns+" FROM plugin_versions WHERE plugin_key = ? ORDER BY created_at, id"), key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.PluginVersion
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func (r pluginRepo) Version(ctx context.Context, key, version string) (*store.PluginVersion, error) {
	row := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT "+versionColumns+" FROM plugin_versions WHERE plugin_key = ? AND version = ?"), key, version)
	v, err := scanVersion(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &v, nil
}

func (r pluginRepo) Source(ctx context.Context, key, version string) (string, error) {
	var src string
	err := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT source FROM plugin_versions WHERE plugin_key = ? AND version = ?"), key, version).Scan(&src)
	if errors.Is(err, sql.ErrNoRows) {
		return "", store.ErrNotFound
	}
	return src, err
}

// insertVersion stores a version and, for a key's first version or when
// activate is set, makes it the active one. It reports whether the version
// became active.
func (r pluginRepo) InsertVersion(ctx context.Context, v store.NewPluginVersion, activate, enabled, heldBack bool) (active bool, err error) {
	err = r.tx(ctx, func(tx *sql.Tx) error {
		var icon any
		if len(v.Icon) > 0 {
			icon = v.Icon
		}
		if _, err := tx.ExecContext(ctx, r.s.Rebind(`INSERT INTO plugin_versions (plugin_key, version, source, sha256, icon, origin, origin_url, uploaded_by, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`), v.Key, v.Version, v.Source, v.SHA256, icon, v.Origin, v.OriginURL, v.Actor, pluginNow()); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, r.s.Rebind("SELECT COUNT(*) FROM plugin_state WHERE plugin_key = ?"), v.Key).Scan(&n); err != nil {
			return err
		}
		switch {
		case n == 0:
			active = true
			_, err := tx.ExecContext(ctx, r.s.Rebind("INSERT INTO plugin_state (plugin_key, active_version, enabled, held_back, updated_at) VALUES (?, ?, ?, ?, ?)"),
				v.Key, v.Version, boolInt(enabled), boolInt(heldBack), pluginNow())
			if err != nil {
				return err
			}
		case activate:
			active = true
			if err := r.setActiveTx(ctx, tx, v.Key, v.Version, enabled, heldBack); err != nil {
				return err
			}
		}
		return r.bump(ctx, tx)
	})
	return active, err
}

func (r pluginRepo) setActiveTx(ctx context.Context, tx *sql.Tx, key, version string, enabled, heldBack bool) error {
	_, err := tx.ExecContext(ctx, r.s.Rebind("UPDATE plugin_state SET active_version = ?, enabled = ?, held_back = ?, updated_at = ? WHERE plugin_key = ?"),
		version, boolInt(enabled), boolInt(heldBack), pluginNow(), key)
	return err
}

// setState rewrites a key's state and bumps the revision.
func (r pluginRepo) SetState(ctx context.Context, s store.PluginState) error {
	return r.tx(ctx, func(tx *sql.Tx) error {
		if err := r.setActiveTx(ctx, tx, s.Key, s.ActiveVersion, s.Enabled, s.HeldBack); err != nil {
			return err
		}
		return r.bump(ctx, tx)
	})
}

// deletePlugin removes every version and the state of key.
func (r pluginRepo) DeletePlugin(ctx context.Context, key string) error {
	return r.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, r.s.Rebind("DELETE FROM plugin_state WHERE plugin_key = ?"), key)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, r.s.Rebind("DELETE FROM plugin_versions WHERE plugin_key = ?"), key); err != nil {
			return err
		}
		return r.bump(ctx, tx)
	})
}

// deleteVersion removes one version that is not the active one; the check
// runs inside the transaction so a concurrent activation cannot slip by.
func (r pluginRepo) DeleteVersion(ctx context.Context, key, version string) error {
	return r.tx(ctx, func(tx *sql.Tx) error {
		var active string
		err := tx.QueryRowContext(ctx, r.s.Rebind("SELECT active_version FROM plugin_state WHERE plugin_key = ?"), key).Scan(&active)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		if active == version {
			return store.ErrActivePluginVersion
		}
		res, err := tx.ExecContext(ctx, r.s.Rebind("DELETE FROM plugin_versions WHERE plugin_key = ? AND version = ?"), key, version)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		return r.bump(ctx, tx)
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (r pluginRepo) Sources(ctx context.Context) ([]store.MarketplaceSource, error) {
	rows, err := r.s.db.QueryContext(ctx, "SELECT url, created_at FROM plugin_marketplace_sources ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []store.MarketplaceSource{}
	for rows.Next() {
		var s store.MarketplaceSource
		if err := rows.Scan(&s.URL, &s.CreatedAt); err != nil {
			return nil, err
		}
		s.CreatedAt = s.CreatedAt.UTC()
		out = append(out, s)
	}
	return out, rows.Err()
}

// addSource stores url; an address already stored is left as it is.
func (r pluginRepo) AddSource(ctx context.Context, url string) (store.MarketplaceSource, bool, error) {
	list, err := r.Sources(ctx)
	if err != nil {
		return store.MarketplaceSource{}, false, err
	}
	for _, s := range list {
		if s.URL == url {
			return s, false, nil
		}
	}
	s := store.MarketplaceSource{URL: url, CreatedAt: pluginNow()}
	_, err = r.s.db.ExecContext(ctx, r.s.Rebind("INSERT INTO plugin_marketplace_sources (url, created_at) VALUES (?, ?)"), s.URL, s.CreatedAt)
	if err != nil && classify(err) == classUnique {
		return s, false, nil
	}
	return s, err == nil, err
}

func (r pluginRepo) DeleteSource(ctx context.Context, url string) error {
	res, err := r.s.db.ExecContext(ctx, r.s.Rebind("DELETE FROM plugin_marketplace_sources WHERE url = ?"), url)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

func (r pluginRepo) HasSource(ctx context.Context, url string) (bool, error) {
	var n int
	err := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT COUNT(*) FROM plugin_marketplace_sources WHERE url = ?"), url).Scan(&n)
	return n > 0, err
}

func (r pluginRepo) Audit(ctx context.Context, e store.PluginAudit) error {
	if len(e.Detail) > 2000 {
		e.Detail = e.Detail[:2000]
	}
	_, err := r.s.db.ExecContext(ctx, r.s.Rebind(`INSERT INTO plugin_audit (actor, action, plugin_key, version, outcome, detail, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?)`), e.Actor, e.Action, e.Key, e.Version, e.Outcome, e.Detail, pluginNow())
	return err
}

// auditLog returns the newest entries first.
func (r pluginRepo) AuditLog(ctx context.Context, limit int) ([]store.PluginAudit, error) {
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind("SELECT actor, action, plugin_key, version, outcome, detail FROM plugin_audit ORDER BY id DESC LIMIT ?"), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.PluginAudit
	for rows.Next() {
		var e store.PluginAudit
		if err := rows.Scan(&e.Actor, &e.Action, &e.Key, &e.Version, &e.Outcome, &e.Detail); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
