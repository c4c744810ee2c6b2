package plugin

import (
	"context"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// StoredVersion is one uploaded plugin version as kept in the database.
type StoredVersion = store.PluginVersion

// State is a plugin key's switchboard: which version is active, whether it
// is enabled, and whether it was forced in despite a conflict (held back).
type State = store.PluginState

// MarketplaceSource is one registered marketplace index address.
type MarketplaceSource = store.MarketplaceSource

// AuditEntry is one row of the plugin administration audit log.
type AuditEntry = store.PluginAudit

// Origins of a stored version.
const (
	OriginUpload      = "upload"
	OriginMarketplace = "marketplace"
	OriginSeed        = "seed"
)

// newVersion is a version about to be stored.
type newVersion = store.NewPluginVersion

var errActiveVersion = store.ErrActivePluginVersion

// db is the plugin repository under the short names the package uses.
type db struct{ repo store.PluginRepo }

func (d *db) revision(ctx context.Context) (string, error)          { return d.repo.Revision(ctx) }
func (d *db) states(ctx context.Context) ([]State, error)           { return d.repo.States(ctx) }
func (d *db) state(ctx context.Context, key string) (*State, error) { return d.repo.State(ctx, key) }
func (d *db) versions(ctx context.Context, key string) ([]StoredVersion, error) {
	return d.repo.Versions(ctx, key)
}
func (d *db) version(ctx context.Context, key, version string) (*StoredVersion, error) {
	return d.repo.Version(ctx, key, version)
}
func (d *db) source(ctx context.Context, key, version string) (string, error) {
	return d.repo.Source(ctx, key, version)
}
func (d *db) insertVersion(ctx context.Context, v newVersion, activate, enabled, heldBack bool) (bool, error) {
	return d.repo.InsertVersion(ctx, v, activate, enabled, heldBack)
}
func (d *db) setState(ctx context.Context, s State) error { return d.repo.SetState(ctx, s) }
func (d *db) deletePlugin(ctx context.Context, key string) error {
	return d.repo.DeletePlugin(ctx, key)
}
func (d *db) deleteVersion(ctx context.Context, key, version string) error {
	return d.repo.DeleteVersion(ctx, key, version)
}
func (d *db) sources(ctx context.Context) ([]MarketplaceSource, error) { return d.repo.Sources(ctx) }
func (d *db) addSource(ctx context.Context, url string) (MarketplaceSource, bool, error) {
	return d.repo.AddSource(ctx, url)
}
func (d *db) deleteSource(ctx context.Context, url string) error {
	return d.repo.DeleteSource(ctx, url)
}
func (d *db) hasSource(ctx context.Context, url string) (bool, error) {
	return d.repo.HasSource(ctx, url)
}
func (d *db) audit(ctx context.Context, e AuditEntry) error { return d.repo.Audit(ctx, e) }
func (d *db) auditLog(ctx context.Context, limit int) ([]AuditEntry, error) {
	return d.repo.AuditLog(ctx, limit)
}
