package plugin

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// MaxIconBytes caps an uploaded icon.
const MaxIconBytes = 256 << 10

// UploadRequest is one plugin source offered for storage, by the admin API,
// the marketplace, seeding or a test.
type UploadRequest struct {
	Source string
	Icon   []byte
	// Activate makes a later version of an installed key the active one;
	// a key's first version is always activated.
	Activate bool
	// Enabled is the state an activated version takes; nil means true.
	Enabled *bool
	// Force stores the plugin despite conflicts with other plugins; it stays
	// held back (disabled) until the conflict is gone.
	Force bool
	// Actor, Origin and OriginURL are recorded with the version.
	Actor     string
	Origin    string
	OriginURL string
	// ExpectedKey and ExpectedVersion, when set, must equal the manifest's:
	// a marketplace entry's directory names.
	ExpectedKey     string
	ExpectedVersion string
}

// UploadResult is the outcome of an upload.
type UploadResult struct {
	Key      string `json:"key"`
	Version  string `json:"version"`
	Active   bool   `json:"active"`
	Enabled  bool   `json:"enabled"`
	HeldBack bool   `json:"held_back"`
	// Unchanged is true when this exact version was already stored.
	Unchanged bool `json:"unchanged"`
	// Problems lists the conflicts a forced upload was stored despite.
	Problems manifest.Problems `json:"problems,omitempty"`
	// Inferred says what the host filled in for a legacy declaration, such
	// as the modes of a bare openai_responses claim (CONTRACT.md).
	Inferred []manifest.Inference `json:"inferred,omitempty"`
}

// Upload validates a plugin source and stores it as an immutable version.
// Refusals are *Error: 400 plugin_invalid with every problem, 409
// version_exists for a different source under a stored version, 400
// plugin_conflict when it would take what another enabled plugin serves.
func (r *Registry) Upload(ctx context.Context, req UploadRequest) (*UploadResult, error) {
	if len(req.Icon) > MaxIconBytes {
		return nil, invalid(manifest.Problems{{Path: "icon", Message: fmt.Sprintf("is %d bytes; the limit is %d", len(req.Icon), MaxIconBytes)}})
	}
	c, problems := prepare("plugin.js", req.Source)
	if len(problems) > 0 {
		return nil, invalid(problems)
	}
	m := c.manifest
	if problems := expectIdentity(m, req.ExpectedKey, req.ExpectedVersion); len(problems) > 0 {
		return nil, invalid(problems)
	}
	existing, err := r.db.version(ctx, m.Key, m.Version)
	switch {
	case err == nil && existing.SHA256 == c.sha256:
		return r.reupload(ctx, req, m)
	case err == nil:
		return nil, errorf(http.StatusConflict, "version_exists",
			"%s@%s is already stored with a different source; a published version is immutable, so upload a new version", m.Key, m.Version)
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	conflicts := manifest.Conflicts(m, r.otherEnabled(m.Key))
	if len(conflicts) > 0 && !req.Force {
		return nil, conflict(conflicts)
	}
	enabled := req.Enabled == nil || *req.Enabled
	origin := req.Origin
	if origin == "" {
		origin = OriginUpload
	}
	nv := newVersion{Key: m.Key, Version: m.Version, Source: c.source, SHA256: c.sha256, Icon: req.Icon,
		Origin: origin, OriginURL: req.OriginURL, Actor: req.Actor}
	if _, err := r.db.insertVersion(ctx, nv, req.Activate, enabled, len(conflicts) > 0); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil, errorf(http.StatusConflict, "version_exists", "%s@%s was stored concurrently; retry to compare sources", m.Key, m.Version)
		}
		return nil, err
	}
	if err := r.Rebuild(ctx); err != nil {
		return nil, err
	}
	res, err := r.result(ctx, m.Key, m.Version)
	if err != nil {
		return nil, err
	}
	res.Problems = conflicts
	res.Inferred = m.Inferred
	return res, nil
}

// reupload handles the same key, version and source again: nothing is
// stored, but an explicit activate still activates it (seeding relies on it).
func (r *Registry) reupload(ctx context.Context, req UploadRequest, m *manifest.Manifest) (*UploadResult, error) {
	if req.Activate {
		if err := r.Activate(ctx, m.Key, m.Version, req.Force); err != nil {
			return nil, err
		}
	}
	res, err := r.result(ctx, m.Key, m.Version)
	if err != nil {
		return nil, err
	}
	res.Unchanged = true
	res.Inferred = m.Inferred
	return res, nil
}

func expectIdentity(m *manifest.Manifest, key, version string) manifest.Problems {
	var out manifest.Problems
	if key != "" && m.Key != key {
		out = append(out, manifest.Problem{Path: "meta.key", Message: fmt.Sprintf("is %q but the marketplace directory is %q; they must be equal", m.Key, key)})
	}
	if version != "" && m.Version != version {
		out = append(out, manifest.Problem{Path: "meta.version", Message: fmt.Sprintf("is %q but the marketplace version is %q; they must be equal", m.Version, version)})
	}
	return out
}

// otherEnabled lists the manifests the live generation serves, except key's.
func (r *Registry) otherEnabled(key string) []*manifest.Manifest {
	var out []*manifest.Manifest
	for _, l := range r.Current().Plugins() {
		if l.Enabled && l.Key != key {
			out = append(out, l.Manifest)
		}
	}
	return out
}

func (r *Registry) result(ctx context.Context, key, version string) (*UploadResult, error) {
	s, err := r.db.state(ctx, key)
	if err != nil {
		return nil, err
	}
	active := s.ActiveVersion == version
	held := active && r.heldBack(key)
	return &UploadResult{Key: key, Version: version, Active: active, Enabled: active && s.Enabled && !held, HeldBack: held}, nil
}

// Activate makes a stored version the active one. It is refused with 400
// when the version conflicts with other enabled plugins, unless force keeps
// it held back.
func (r *Registry) Activate(ctx context.Context, key, version string, force bool) error {
	s, err := r.db.state(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return pluginNotFound(key)
	}
	if err != nil {
		return err
	}
	_, e, err := r.entryFor(ctx, key, version)
	var problems manifest.Problems
	switch {
	case errors.Is(err, store.ErrNotFound):
		return versionNotFound(key, version)
	case errors.As(err, &problems):
		return invalid(problems)
	case err != nil:
		return err
	}
	if s.ActiveVersion == version {
		return nil
	}
	held := false
	if s.Enabled {
		if c := manifest.Conflicts(e.c.manifest, r.otherEnabled(key)); len(c) > 0 {
			if !force {
				return conflict(c)
			}
			held = true
		}
	}
	s.ActiveVersion, s.HeldBack = version, held
	if err := r.db.setState(ctx, *s); err != nil {
		return err
	}
	return r.Rebuild(ctx)
}

// SetEnabled enables or disables a plugin. Enabling is refused with 400 when
// it would conflict with other enabled plugins, unless force keeps it held
// back until the conflict is gone.
func (r *Registry) SetEnabled(ctx context.Context, key string, enabled, force bool) error {
	s, err := r.db.state(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return pluginNotFound(key)
	}
	if err != nil {
		return err
	}
	held := false
	if enabled {
		l, ok := r.Current().active[key]
		if ok {
			if c := manifest.Conflicts(l.Manifest, r.otherEnabled(key)); len(c) > 0 {
				if !force {
					return conflict(c)
				}
				held = true
			}
		}
	}
	if s.Enabled == enabled && s.HeldBack == held {
		return nil
	}
	s.Enabled, s.HeldBack = enabled, held
	if err := r.db.setState(ctx, *s); err != nil {
		return err
	}
	return r.Rebuild(ctx)
}

// Delete removes a plugin and all its versions. It is refused with 409
// naming the channels that still bind it.
func (r *Registry) Delete(ctx context.Context, key string) error {
	bound, err := r.BoundChannels(ctx, key)
	if err != nil {
		return err
	}
	if len(bound) > 0 {
		names := make([]string, len(bound))
		for i, c := range bound {
			names[i] = fmt.Sprintf("%q (id %d)", c.Name, c.ID)
		}
		return errorf(http.StatusConflict, "plugin_in_use", "plugin %q is still bound by channel(s) %s; change or delete them first", key, joinList(names))
	}
	if err := r.db.deletePlugin(ctx, key); errors.Is(err, store.ErrNotFound) {
		return pluginNotFound(key)
	} else if err != nil {
		return err
	}
	return r.Rebuild(ctx)
}

// DeleteVersion removes one inactive version.
func (r *Registry) DeleteVersion(ctx context.Context, key, version string) error {
	err := r.db.deleteVersion(ctx, key, version)
	switch {
	case errors.Is(err, errActiveVersion):
		return errorf(http.StatusConflict, "version_active", "%s@%s is the active version; activate another version or delete the plugin", key, version)
	case errors.Is(err, store.ErrNotFound):
		return versionNotFound(key, version)
	case err != nil:
		return err
	}
	return r.Rebuild(ctx)
}

func joinList(items []string) string {
	out := ""
	for i, s := range items {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}
