// Package plugin hosts task plugins: it stores uploaded versions, compiles and
// validates them, and publishes the runtime as immutable generations. A
// request pins the generation it started on; background work may use a newer
// one. The task pipeline (internal/task) reads generations to find which
// plugin serves a channel, a route or a host protocol.
package plugin

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/plugin/jsrt"
	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Channel types that bind plugins by settings rather than by channelTypes.
const (
	ChannelTypePeerAPI    = 60
	ChannelTypeTaskPlugin = 61
)

// Loaded is one compiled, validated plugin version with its runtime pool.
type Loaded struct {
	Key      string
	Version  string
	Manifest *manifest.Manifest
	Pool     *jsrt.Pool
	// Enabled is false for a disabled plugin or one held back by a conflict.
	Enabled bool
	// Source is the module text, kept for the admin API.
	Source string
}

// RouteEntry is one native route of an enabled plugin.
type RouteEntry struct {
	Plugin *Loaded
	Route  manifest.Route
	// segments is the route path split on "/", with ":name" params.
	segments []string
}

// Generation is an immutable view of every active plugin.
type Generation struct {
	// Number counts generations on this node; Revision is the database
	// override revision all nodes converge on.
	Number   int64
	Revision string
	// active maps key → active version (enabled or not).
	active map[string]*Loaded
	// versions maps key → version → loaded, for tasks produced by an older
	// version that is still stored.
	versions     map[string]map[string]*Loaded
	routes       []RouteEntry
	channelTypes map[int]*Loaded
}

// NewGeneration indexes the given active plugins. extra holds further loaded
// versions (inactive ones kept for polling their tasks).
func NewGeneration(number int64, revision string, active []*Loaded, extra []*Loaded) *Generation {
	g := &Generation{Number: number, Revision: revision, active: map[string]*Loaded{},
		versions: map[string]map[string]*Loaded{}, channelTypes: map[int]*Loaded{}}
	for _, l := range append(slices.Clone(active), extra...) {
		if g.versions[l.Key] == nil {
			g.versions[l.Key] = map[string]*Loaded{}
		}
		g.versions[l.Key][l.Version] = l
	}
	for _, l := range active {
		g.active[l.Key] = l
		if !l.Enabled {
			continue
		}
		for _, t := range l.Manifest.ChannelTypes {
			g.channelTypes[t] = l
		}
		for _, r := range l.Manifest.Routes {
			g.routes = append(g.routes, RouteEntry{Plugin: l, Route: r, segments: splitPath(r.Path)})
		}
	}
	// Static segments beat parameters, so /v1/x/status wins over /v1/x/:id.
	sort.SliceStable(g.routes, func(i, j int) bool { return staticScore(g.routes[i].segments) > staticScore(g.routes[j].segments) })
	return g
}

// Plugins lists the active versions, sorted by key.
func (g *Generation) Plugins() []*Loaded {
	out := make([]*Loaded, 0, len(g.active))
	for _, l := range g.active {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Plugin returns the active, enabled version of key.
func (g *Generation) Plugin(key string) (*Loaded, bool) {
	l, ok := g.active[key]
	if !ok || !l.Enabled {
		return nil, false
	}
	return l, true
}

// Version returns a stored version of key that this generation loaded,
// enabled or not: a task keeps being polled by the version that made it
// when that version is still loaded.
func (g *Generation) Version(key, version string) (*Loaded, bool) {
	l, ok := g.versions[key][version]
	return l, ok
}

// ForChannel returns the plugins a channel binds, the primary one first:
// type 61 by settings.task_plugin_key; type 60 by task_plugin_key and
// task_extend_plugin_keys (only plugins that declare peer_api); any other
// type by the plugin whose channelTypes names it, which for a chat provider
// type also needs the channel's own consent (legacyBindAllowed).
func (g *Generation) ForChannel(c *store.Channel) ([]*Loaded, error) {
	switch c.Type {
	case ChannelTypeTaskPlugin:
		key := settingString(c.Settings, "task_plugin_key")
		if key == "" {
			return nil, fmt.Errorf("channel %q has no task_plugin_key setting", c.Name)
		}
		l, ok := g.Plugin(key)
		if !ok {
			return nil, fmt.Errorf("channel %q binds plugin %q, which is not installed and enabled", c.Name, key)
		}
		return []*Loaded{l}, nil
	case ChannelTypePeerAPI:
		keys := append([]string{settingString(c.Settings, "task_plugin_key")}, settingStrings(c.Settings, "task_extend_plugin_keys")...)
		var out []*Loaded
		for _, key := range keys {
			if key == "" {
				continue
			}
			l, ok := g.Plugin(key)
			if !ok || !slices.Contains(l.Manifest.Upstreams, "peer_api") {
				continue
			}
			out = append(out, l)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("channel %q binds no enabled plugin that declares peer_api", c.Name)
		}
		return out, nil
	}
	if l, ok := g.channelTypes[c.Type]; ok {
		if !legacyBindAllowed(c, l.Key, l.Manifest.Models) {
			return nil, fmt.Errorf("channel %q (type %d) holds a chat provider key; plugin %q may use it only when the channel's settings.task_plugin_key names that plugin or the channel serves only that plugin's models", c.Name, c.Type, l.Key)
		}
		return []*Loaded{l}, nil
	}
	return nil, fmt.Errorf("no plugin serves channel type %d", c.Type)
}

// ForChannelModel picks, among the plugins a channel binds, the one that
// lists model; when none lists it, the primary one.
func (g *Generation) ForChannelModel(c *store.Channel, model string) (*Loaded, error) {
	ls, err := g.ForChannel(c)
	if err != nil {
		return nil, err
	}
	for _, l := range ls {
		if slices.Contains(l.Manifest.Models, model) {
			return l, nil
		}
	}
	return ls[0], nil
}

// MatchRoute finds the native route for method and path, with its params.
// HEAD matches a GET route when no HEAD route exists.
func (g *Generation) MatchRoute(method, path string) (*RouteEntry, map[string]string, bool) {
	segs := splitPath(path)
	for _, want := range []string{method, headFallback(method)} {
		if want == "" {
			continue
		}
		for i := range g.routes {
			e := &g.routes[i]
			if !strings.EqualFold(e.Route.Method, want) {
				continue
			}
			if params, ok := matchSegments(e.segments, segs); ok {
				return e, params, true
			}
		}
	}
	return nil, nil, false
}

// ProtocolPlugins lists the enabled plugins that claim protocol (canonical
// name) for model, sorted by sortPriority (larger first) then key.
func (g *Generation) ProtocolPlugins(protocol, model string) []*Loaded {
	var out []*Loaded
	for _, l := range g.active {
		if !l.Enabled {
			continue
		}
		claim, ok := l.Manifest.Protocol(protocol)
		if !ok {
			continue
		}
		models := claim.Models
		if len(models) == 0 {
			models = l.Manifest.Models
		}
		if slices.Contains(models, model) {
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Manifest.SortPriority != out[j].Manifest.SortPriority {
			return out[i].Manifest.SortPriority > out[j].Manifest.SortPriority
		}
		return out[i].Key < out[j].Key
	})
	return out
}

func headFallback(method string) string {
	if strings.EqualFold(method, "HEAD") {
		return "GET"
	}
	return ""
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func staticScore(segs []string) int {
	n := 0
	for _, s := range segs {
		if !strings.HasPrefix(s, ":") {
			n++
		}
	}
	return n
}

func matchSegments(pattern, path []string) (map[string]string, bool) {
	if len(pattern) != len(path) {
		return nil, false
	}
	var params map[string]string
	for i, p := range pattern {
		if strings.HasPrefix(p, ":") {
			if path[i] == "" {
				return nil, false
			}
			if params == nil {
				params = map[string]string{}
			}
			params[p[1:]] = path[i]
			continue
		}
		if p != path[i] {
			return nil, false
		}
	}
	return params, true
}

func settingString(s map[string]any, name string) string {
	v, _ := s[name].(string)
	return strings.TrimSpace(v)
}

func settingStrings(s map[string]any, name string) []string {
	switch v := s[name].(type) {
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if str, ok := x.(string); ok && strings.TrimSpace(str) != "" {
				out = append(out, strings.TrimSpace(str))
			}
		}
		return out
	case []string:
		return v
	case string:
		var out []string
		for _, part := range strings.Split(v, ",") {
			if p := strings.TrimSpace(part); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	return nil
}

// ClaimsType reports whether an enabled plugin names channel type t in its
// channelTypes, so channels of a type the gateway has no adapter for may
// still be saved for it.
func (g *Generation) ClaimsType(t int) bool {
	_, ok := g.channelTypes[t]
	return ok
}
