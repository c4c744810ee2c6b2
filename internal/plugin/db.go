package plugin

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

// StoredVersion is one uploaded plugin version as kept in the database.
type StoredVersion struct {
	Key        string    `json:"-"`
	Version    string    `json:"version"`
	SHA256     string    `json:"sha256"`
	Origin     string    `json:"origin"`
	OriginURL  string    `json:"origin_url,omitempty"`
	UploadedBy string    `json:"uploaded_by"`
	CreatedAt  time.Time `json:"created_at"`
	HasIcon    bool      `json:"has_icon"`
}

// State is a plugin key's switchboard: which version is active, whether it is
// enabled, and whether it was forced in despite a conflict (held back).
type State struct {
	Key           string
	ActiveVersion string
	Enabled       bool
	HeldBack      bool
}

// Origins of a stored version.
const (
	OriginUpload      = "upload"
	OriginMarketplace = "marketplace"
	OriginSeed        = "seed"
)

// db is the plugin tables' repository. Writes that change what the runtime
// serves bump the revision in the same transaction.
type db struct {
	sql     *sql.DB
	dialect sqlstore.Dialect
}

func (d *db) q(query string) string { return sqlstore.Rebind(d.dialect, query) }

func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// newRevision makes a revision that sorts by time and never repeats, so two
// nodes bumping at once still produce different values.
func newRevision() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%013x-%s", time.Now().UnixMilli(), hex.EncodeToString(b[:]))
}

func (d *db) tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (d *db) bump(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, d.q("UPDATE plugin_runtime SET revision = ?, updated_at = ? WHERE id = 1"), newRevision(), now())
	return err
}

func (d *db) revision(ctx context.Context) (string, error) {
	var rev string
	err := d.sql.QueryRowContext(ctx, "SELECT revision FROM plugin_runtime WHERE id = 1").Scan(&rev)
	return rev, err
}

func (d *db) states(ctx context.Context) ([]State, error) {
	rows, err := d.sql.QueryContext(ctx, "SELECT plugin_key, active_version, enabled, held_back FROM plugin_state ORDER BY plugin_key")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []State
	for rows.Next() {
		var s State
		var en, held int
		if err := rows.Scan(&s.Key, &s.ActiveVersion, &en, &held); err != nil {
			return nil, err
		}
		s.Enabled, s.HeldBack = en != 0, held != 0
		out = append(out, s)
	}
	return out, rows.Err()
}

func (d *db) state(ctx context.Context, key string) (*State, error) {
	s := State{Key: key}
	var en, held int
	err := d.sql.QueryRowContext(ctx, d.q("SELECT active_version, enabled, held_back FROM plugin_state WHERE plugin_key = ?"), key).
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

func scanVersion(sc interface{ Scan(...any) error }) (StoredVersion, error) {
	var v StoredVersion
	err := sc.Scan(&v.Key, &v.Version, &v.SHA256, &v.Origin, &v.OriginURL, &v.UploadedBy, &v.CreatedAt, &v.HasIcon)
	v.CreatedAt = v.CreatedAt.UTC()
	return v, err
}

// versions lists a key's stored versions, oldest first.
func (d *db) versions(ctx context.Context, key string) ([]StoredVersion, error) {
	rows, err := d.sql.QueryContext(ctx, d.q("SELECT "+versionColumns+" FROM plugin_versions WHERE plugin_key = ? ORDER BY created_at, id"), key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []StoredVersion
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func (d *db) version(ctx context.Context, key, version string) (*StoredVersion, error) {
	row := d.sql.QueryRowContext(ctx, d.q("SELECT "+versionColumns+" FROM plugin_versions WHERE plugin_key = ? AND version = ?"), key, version)
	v, err := scanVersion(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &v, nil
}

func (d *db) source(ctx context.Context, key, version string) (string, error) {
	var src string
	err := d.sql.QueryRowContext(ctx, d.q("SELECT source FROM plugin_versions WHERE plugin_key = ? AND version = ?"), key, version).Scan(&src)
	if errors.Is(err, sql.ErrNoRows) {
		return "", store.ErrNotFound
	}
	return src, err
}

// newVersion is a version about to be stored.
type newVersion struct {
	key, version, source, sha256 string
	icon                         []byte
	origin, originURL, actor     string
}

// insertVersion stores a version and, for a key's first version or when
// activate is set, makes it the active one. It reports whether the version
// became active.
func (d *db) insertVersion(ctx context.Context, v newVersion, activate, enabled, heldBack bool) (active bool, err error) {
	err = d.tx(ctx, func(tx *sql.Tx) error {
		var icon any
		if len(v.icon) > 0 {
			icon = v.icon
		}
		if _, err := tx.ExecContext(ctx, d.q(`INSERT INTO plugin_versions (plugin_key, version, source, sha256, icon, origin, origin_url, uploaded_by, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`), v.key, v.version, v.source, v.sha256, icon, v.origin, v.originURL, v.actor, now()); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, d.q("SELECT COUNT(*) FROM plugin_state WHERE plugin_key = ?"), v.key).Scan(&n); err != nil {
			return err
		}
		switch {
		case n == 0:
			active = true
			_, err := tx.ExecContext(ctx, d.q("INSERT INTO plugin_state (plugin_key, active_version, enabled, held_back, updated_at) VALUES (?, ?, ?, ?, ?)"),
				v.key, v.version, boolInt(enabled), boolInt(heldBack), now())
			if err != nil {
				return err
			}
		case activate:
			active = true
			if err := d.setActiveTx(ctx, tx, v.key, v.version, enabled, heldBack); err != nil {
				return err
			}
		}
		return d.bump(ctx, tx)
	})
	return active, err
}

func (d *db) setActiveTx(ctx context.Context, tx *sql.Tx, key, version string, enabled, heldBack bool) error {
	_, err := tx.ExecContext(ctx, d.q("UPDATE plugin_state SET active_version = ?, enabled = ?, held_back = ?, updated_at = ? WHERE plugin_key = ?"),
		version, boolInt(enabled), boolInt(heldBack), now(), key)
	return err
}

// setState rewrites a key's state and bumps the revision.
func (d *db) setState(ctx context.Context, s State) error {
	return d.tx(ctx, func(tx *sql.Tx) error {
		if err := d.setActiveTx(ctx, tx, s.Key, s.ActiveVersion, s.Enabled, s.HeldBack); err != nil {
			return err
		}
		return d.bump(ctx, tx)
	})
}

// deletePlugin removes every version and the state of key.
func (d *db) deletePlugin(ctx context.Context, key string) error {
	return d.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, d.q("DELETE FROM plugin_state WHERE plugin_key = ?"), key)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, d.q("DELETE FROM plugin_versions WHERE plugin_key = ?"), key); err != nil {
			return err
		}
		return d.bump(ctx, tx)
	})
}

// deleteVersion removes one version that is not the active one; the check
// runs inside the transaction so a concurrent activation cannot slip by.
func (d *db) deleteVersion(ctx context.Context, key, version string) error {
	return d.tx(ctx, func(tx *sql.Tx) error {
		var active string
		err := tx.QueryRowContext(ctx, d.q("SELECT active_version FROM plugin_state WHERE plugin_key = ?"), key).Scan(&active)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		if active == version {
			return errActiveVersion
		}
		res, err := tx.ExecContext(ctx, d.q("DELETE FROM plugin_versions WHERE plugin_key = ? AND version = ?"), key, version)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		return d.bump(ctx, tx)
	})
}

var errActiveVersion = errors.New("the active version cannot be deleted; activate another version first")

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
