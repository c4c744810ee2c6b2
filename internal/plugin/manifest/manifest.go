// Package manifest validates a task plugin's exports (API v1): the `meta`
// manifest and the set of hook functions, and turns them into a normalised,
// typed Manifest. It also answers the cross-plugin pre-flight question of
// whether a candidate conflicts with plugins already installed.
//
// The package knows nothing about the JS runtime: the runtime evaluates the
// module and hands over the plain `meta` value plus the exported names.
package manifest

import "slices"

// APIVersion is the only plugin contract version this host implements.
const APIVersion = 1

// Fetch modes of meta.fetchMode.
const (
	FetchPerTask = "per_task"
	FetchBatch   = "batch"
)

// Canonical upstream kinds of meta.upstreams.
const (
	UpstreamVendor  = "vendor"
	UpstreamPeerAPI = "peer_api"
)

// Auth types of meta.auth.
const (
	AuthNone        = "none"
	AuthAPIKey      = "api_key"
	AuthVertexOAuth = "vertex_oauth"
	AuthOAuth2JWT   = "oauth2_jwt"
)

// Canonical host protocol names of meta.protocols.
const (
	ProtocolVideo     = "std_video"
	ProtocolResponses = "std_responses"
	ProtocolImage     = "std_image"
)

// Modes of a std_responses claim.
const (
	ModeStream     = "stream"
	ModeSync       = "sync"
	ModeBackground = "background"
)

// Route types of meta.routes[].type.
const (
	RouteSubmit  = "submit"
	RouteQuery   = "query"
	RouteDynamic = "dynamic"
)

// DefaultTaskIDParam is the path parameter a query route reads the task id from.
const DefaultTaskIDParam = "task_id"

// Host capabilities a plugin may require.
const (
	CapabilityJSONClone      = "json-clone@1"
	CapabilitySubmitSSEDelta = "submit-sse-delta@1"
)

// SupportedCapabilities are the capabilities this host provides; Validate
// checks meta.requiredCapabilities against it.
var SupportedCapabilities = []string{CapabilityJSONClone, CapabilitySubmitSSEDelta}

// Exports is what the JS runtime reports about an evaluated plugin module.
type Exports struct {
	// Meta is the evaluated `meta` export as plain JSON-like Go values
	// (map[string]any, []any, string, float64 or int64, bool, nil).
	Meta any
	// Functions are the dotted paths of every exported function, e.g.
	// "buildSubmitRequest", "native.decodeCreate",
	// "protocols.std_video.decodeRequest".
	Functions []string
	// Names are the module's top-level export names.
	Names []string
}

// Manifest is a validated, normalised plugin manifest. Its JSON form uses the
// manifest's own field names, so it is also the "normalised meta" the admin
// API shows.
type Manifest struct {
	APIVersion           int             `json:"apiVersion"`
	Key                  string          `json:"key"`
	Name                 string          `json:"name"`
	Version              string          `json:"version"`
	Author               Author          `json:"author"`
	Models               []string        `json:"models"`
	FetchMode            string          `json:"fetchMode"`
	Description          LocalizedText   `json:"description,omitempty"`
	Icon                 string          `json:"icon,omitempty"`
	Website              string          `json:"website,omitempty"`
	SortPriority         int32           `json:"sortPriority"`
	BaseURL              string          `json:"baseUrl,omitempty"`
	AllowedHosts         []string        `json:"allowedHosts"`
	Upstreams            []string        `json:"upstreams"`
	Auth                 Auth            `json:"auth"`
	ChannelTypes         []int           `json:"channelTypes"`
	Routes               []Route         `json:"routes"`
	Protocols            []ProtocolClaim `json:"protocols"`
	UsageSchema          UsageSchema     `json:"usageSchema"`
	UsageExamples        []UsageExample  `json:"usageExamples"`
	UsageProfiles        []UsageProfile  `json:"usageProfiles"`
	RequiredCapabilities []string        `json:"requiredCapabilities"`
	SubmitResponseTypes  []string        `json:"submitResponseTypes"`
	// Kind is task (the default, left out of the normalised meta) or
	// guardrail.
	Kind string `json:"kind,omitempty"`

	// Hooks holds every recognised exported function path. It is not part
	// of meta, so it stays out of the JSON form.
	Hooks HookSet `json:"-"`
	// Inferred lists what validation filled in for a legacy declaration
	// (the modes of a bare openai_responses claim). The normalised meta
	// already shows the result; this says it was inferred.
	Inferred []Inference `json:"-"`
}

// Author is the self-declared plugin author.
type Author struct {
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

// Auth is the upstream authentication the host performs for the plugin.
type Auth struct {
	Type string `json:"type"`
}

// Route is one plugin-defined client-facing route.
type Route struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Type   string `json:"type"`
	// Decode and Render name functions of the plugin's `native` export.
	Decode      string   `json:"decode,omitempty"`
	Render      string   `json:"render"`
	TaskIDParam string   `json:"taskIdParam,omitempty"`
	Models      []string `json:"models,omitempty"`
	// RetainResult is set (default true) on submit and dynamic routes and
	// nil on query routes, where it does not apply.
	RetainResult *bool  `json:"retainResult,omitempty"`
	Action       string `json:"action,omitempty"`
}

// Shape is the route's path shape; see RouteShape.
func (r Route) Shape() string { return RouteShape(r.Path) }

// DecodeHook is the export path of the route's decoder, or "" for none.
func (r Route) DecodeHook() string {
	if r.Decode == "" {
		return ""
	}
	return "native." + r.Decode
}

// RenderHook is the export path of the route's renderer.
func (r Route) RenderHook() string { return "native." + r.Render }

// ProtocolClaim is one host protocol the plugin serves.
type ProtocolClaim struct {
	// Name is canonical: std_video, std_responses or std_image.
	Name string `json:"name"`
	// Models limits the claim; empty means every model of meta.models.
	Models []string `json:"models,omitempty"`
	// Supports lists std_responses modes; empty for the other protocols.
	Supports []string `json:"supports,omitempty"`
	// ExportKey is the key of the plugin's `protocols` export holding this
	// claim's hooks: the canonical name or its ecosystem alias.
	ExportKey string `json:"-"`
}

// HookPath is the export path of one of the claim's hooks, e.g.
// "protocols.openai_video.render".
func (p ProtocolClaim) HookPath(hook string) string {
	return "protocols." + p.ExportKey + "." + hook
}

// SupportsMode reports whether a std_responses claim declares the mode.
func (p ProtocolClaim) SupportsMode(mode string) bool {
	return slices.Contains(p.Supports, mode)
}

// Protocol returns the claim for a canonical protocol name.
func (m *Manifest) Protocol(name string) (ProtocolClaim, bool) {
	for _, p := range m.Protocols {
		if p.Name == name {
			return p, true
		}
	}
	return ProtocolClaim{}, false
}

// HasCapability reports whether meta.requiredCapabilities names cap.
func (m *Manifest) HasCapability(cap string) bool {
	return slices.Contains(m.RequiredCapabilities, cap)
}
