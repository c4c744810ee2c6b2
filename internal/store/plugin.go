package store

import (
	"context"
	"errors"
	"time"
)

// PluginVersion is one uploaded task plugin version, without its source.
type PluginVersion struct {
	Key        string    `json:"-"`
	Version    string    `json:"version"`
	SHA256     string    `json:"sha256"`
	Origin     string    `json:"origin"`
	OriginURL  string    `json:"origin_url,omitempty"`
	UploadedBy string    `json:"uploaded_by"`
	CreatedAt  time.Time `json:"created_at"`
	HasIcon    bool      `json:"has_icon"`
}

// NewPluginVersion is a plugin version about to be stored.
type NewPluginVersion struct {
	Key, Version, Source, SHA256 string
	Icon                         []byte
	Origin, OriginURL, Actor     string
}

// PluginState is a plugin key's switchboard: which version is active,
// whether it is enabled, and whether it was forced in despite a conflict
// (held back).
type PluginState struct {
	Key           string
	ActiveVersion string
	Enabled       bool
	HeldBack      bool
}

// MarketplaceSource is one registered marketplace index address.
type MarketplaceSource struct {
	URL       string    `json:"url"`
	CreatedAt time.Time `json:"created_at"`
}

// PluginAudit is one row of the plugin administration audit log.
type PluginAudit struct {
	Actor   string
	Action  string
	Key     string
	Version string
	Outcome string
	Detail  string
}

// ErrActivePluginVersion refuses deleting the version a plugin serves.
var ErrActivePluginVersion = errors.New("the active version cannot be deleted; activate another version first")

// PluginRepo keeps task plugins: versions, each key's state, marketplace
// sources and the audit log. Every write that changes what the runtime
// serves also moves the revision, in the same transaction, so every node
// notices and rebuilds the same generation.
type PluginRepo interface {
	// Revision is the current revision.
	Revision(ctx context.Context) (string, error)
	// States lists every key's state, by key.
	States(ctx context.Context) ([]PluginState, error)
	// State returns a key's state; a missing key is ErrNotFound.
	State(ctx context.Context, key string) (*PluginState, error)
	// Versions lists a key's versions, oldest first.
	Versions(ctx context.Context, key string) ([]PluginVersion, error)
	// Version and Source return one version; a missing one is ErrNotFound.
	Version(ctx context.Context, key, version string) (*PluginVersion, error)
	Source(ctx context.Context, key, version string) (string, error)
	// InsertVersion stores v and, for a key's first version or when
	// activate is set, makes it the active one; it reports whether it did.
	// A version already stored is ErrConflict.
	InsertVersion(ctx context.Context, v NewPluginVersion, activate, enabled, heldBack bool) (active bool, err error)
	// SetState rewrites a key's state.
	SetState(ctx context.Context, s PluginState) error
	// DeletePlugin removes every version and the state of key.
	DeletePlugin(ctx context.Context, key string) error
	// DeleteVersion removes one version; the active one is
	// ErrActivePluginVersion.
	DeleteVersion(ctx context.Context, key, version string) error

	Sources(ctx context.Context) ([]MarketplaceSource, error)
	// AddSource stores url and reports whether it was new.
	AddSource(ctx context.Context, url string) (MarketplaceSource, bool, error)
	DeleteSource(ctx context.Context, url string) error
	HasSource(ctx context.Context, url string) (bool, error)

	// Audit appends an entry (Detail cut to 2,000 bytes); AuditLog
	// returns the newest limit entries first.
	Audit(ctx context.Context, e PluginAudit) error
	AuditLog(ctx context.Context, limit int) ([]PluginAudit, error)
}
