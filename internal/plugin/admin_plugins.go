package plugin

import (
	"errors"
	"github.com/turnpike-gw/turnpike/internal/accounts"
	"github.com/turnpike-gw/turnpike/internal/apijson"
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func (a *AdminAPI) upload(w http.ResponseWriter, r *http.Request, c *call) error {
	req, err := readUpload(w, r)
	if err != nil {
		return err
	}
	req.Actor, req.Origin = c.actor, OriginUpload
	return a.store(w, r, c, func() (*UploadResult, error) { return a.reg.Upload(r.Context(), req) })
}

// store runs an upload or install and answers 200 with the result, for a
// new version and for one already stored (unchanged tells them apart).
func (a *AdminAPI) store(w http.ResponseWriter, r *http.Request, c *call, run func() (*UploadResult, error)) error {
	res, err := run()
	if err != nil {
		return err
	}
	c.key, c.version = res.Key, res.Version
	accounts.NoteTarget(r.Context(), res.Key)
	if res.HeldBack {
		c.detail = "held back by a conflict: " + res.Problems.Error()
	}
	apijson.Write(w, http.StatusOK, res)
	return nil
}

// pluginView is one installed plugin in the list and detail answers.
type pluginView struct {
	Key           string             `json:"key"`
	Name          string             `json:"name"`
	ActiveVersion string             `json:"active_version"`
	Enabled       bool               `json:"enabled"`
	HeldBack      bool               `json:"held_back"`
	Versions      []StoredVersion    `json:"versions"`
	Summary       *metaSummary       `json:"summary,omitempty"`
	Meta          *manifest.Manifest `json:"meta,omitempty"`
	LoadError     string             `json:"load_error,omitempty"`
}

// metaSummary is the part of meta a listing shows.
type metaSummary struct {
	Description  manifest.LocalizedText `json:"description,omitempty"`
	Icon         string                 `json:"icon,omitempty"`
	Author       manifest.Author        `json:"author"`
	Website      string                 `json:"website,omitempty"`
	Models       []string               `json:"models"`
	FetchMode    string                 `json:"fetchMode"`
	SortPriority int32                  `json:"sortPriority"`
	ChannelTypes []int                  `json:"channelTypes"`
	Protocols    []string               `json:"protocols"`
	Routes       int                    `json:"routes"`
	Upstreams    []string               `json:"upstreams"`
}

func summarise(m *manifest.Manifest) *metaSummary {
	s := &metaSummary{Description: m.Description, Icon: m.Icon, Author: m.Author, Website: m.Website, Models: m.Models,
		FetchMode: m.FetchMode, SortPriority: m.SortPriority, ChannelTypes: m.ChannelTypes, Routes: len(m.Routes),
		Upstreams: m.Upstreams, Protocols: []string{}}
	for _, p := range m.Protocols {
		s.Protocols = append(s.Protocols, p.Name)
	}
	return s
}

func (a *AdminAPI) view(r *http.Request, s State) (pluginView, error) {
	v := pluginView{Key: s.Key, ActiveVersion: s.ActiveVersion, HeldBack: a.reg.heldBack(s.Key)}
	v.Enabled = s.Enabled && !v.HeldBack
	versions, err := a.reg.db.versions(r.Context(), s.Key)
	if err != nil {
		return v, err
	}
	v.Versions = versions
	if l, ok := a.reg.Current().active[s.Key]; ok && l.Version == s.ActiveVersion {
		v.Name, v.Summary = l.Manifest.Name, summarise(l.Manifest)
		v.Meta = l.Manifest
		return v, nil
	}
	for _, le := range a.reg.loadErrors() {
		if le.Key == s.Key {
			v.LoadError = le.Message
		}
	}
	return v, nil
}

func (a *AdminAPI) list(w http.ResponseWriter, r *http.Request, _ *call) error {
	states, err := a.reg.db.states(r.Context())
	if err != nil {
		return err
	}
	items := make([]pluginView, 0, len(states))
	for _, s := range states {
		v, err := a.view(r, s)
		if err != nil {
			return err
		}
		v.Meta = nil
		items = append(items, v)
	}
	apijson.Write(w, http.StatusOK, map[string]any{"items": items, "total": len(items)})
	return nil
}

func (a *AdminAPI) state(r *http.Request, key string) (*State, error) {
	s, err := a.reg.db.state(r.Context(), key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, pluginNotFound(key)
	}
	return s, err
}

// detail shows one plugin with its normalised meta; ?version= shows the meta
// of another stored version.
func (a *AdminAPI) detail(w http.ResponseWriter, r *http.Request, c *call) error {
	s, err := a.state(r, c.key)
	if err != nil {
		return err
	}
	v, err := a.view(r, *s)
	if err != nil {
		return err
	}
	if want := r.URL.Query().Get("version"); want != "" && want != s.ActiveVersion {
		c.version = want
		l, err := a.reg.LoadVersion(r.Context(), c.key, want)
		if err != nil {
			return err
		}
		v.Meta, v.Summary = l.Manifest, nil
	}
	v.Summary = nil
	apijson.Write(w, http.StatusOK, v)
	return nil
}

func (a *AdminAPI) source(w http.ResponseWriter, r *http.Request, c *call) error {
	s, err := a.state(r, c.key)
	if err != nil {
		return err
	}
	c.version = r.URL.Query().Get("version")
	if c.version == "" {
		c.version = s.ActiveVersion
	}
	v, err := a.reg.db.version(r.Context(), c.key, c.version)
	if errors.Is(err, store.ErrNotFound) {
		return versionNotFound(c.key, c.version)
	}
	if err != nil {
		return err
	}
	src, err := a.reg.db.source(r.Context(), c.key, c.version)
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, map[string]any{"key": c.key, "version": c.version, "sha256": v.SHA256, "source": src})
	return nil
}

func (a *AdminAPI) activate(w http.ResponseWriter, r *http.Request, c *call) error {
	var b struct {
		Version string `json:"version"`
		Force   bool   `json:"force"`
	}
	if err := readJSON(w, r, &b, "version", "force"); err != nil {
		return err
	}
	if b.Version == "" {
		return badRequest("version is required")
	}
	c.version = b.Version
	if err := a.reg.Activate(r.Context(), c.key, b.Version, b.Force); err != nil {
		return err
	}
	return a.writeState(w, r, c.key)
}

func (a *AdminAPI) setStatus(w http.ResponseWriter, r *http.Request, c *call) error {
	var b struct {
		Enabled *bool `json:"enabled"`
		Force   bool  `json:"force"`
	}
	if err := readJSON(w, r, &b, "enabled", "force"); err != nil {
		return err
	}
	if b.Enabled == nil {
		return badRequest("enabled is required")
	}
	if *b.Enabled {
		c.detail = "enable"
	} else {
		c.detail = "disable"
	}
	if err := a.reg.SetEnabled(r.Context(), c.key, *b.Enabled, b.Force); err != nil {
		return err
	}
	return a.writeState(w, r, c.key)
}

func (a *AdminAPI) writeState(w http.ResponseWriter, r *http.Request, key string) error {
	s, err := a.state(r, key)
	if err != nil {
		return err
	}
	res, err := a.reg.result(r.Context(), key, s.ActiveVersion)
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, res)
	return nil
}

func (a *AdminAPI) deletePlugin(w http.ResponseWriter, r *http.Request, c *call) error {
	if err := a.reg.Delete(r.Context(), c.key); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, map[string]any{"key": c.key, "deleted": true})
	return nil
}

func (a *AdminAPI) deleteVersion(w http.ResponseWriter, r *http.Request, c *call) error {
	if err := a.reg.DeleteVersion(r.Context(), c.key, c.version); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, map[string]any{"key": c.key, "version": c.version, "deleted": true})
	return nil
}
