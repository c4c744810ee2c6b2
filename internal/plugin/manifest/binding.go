package manifest

import "slices"

// Channel types a plugin must never list: they bind plugins by key.
const (
	ChannelTypePeerAPI    = 60
	ChannelTypeTaskPlugin = 61
)

// upstreamAliases maps every accepted spelling to its canonical kind.
var upstreamAliases = map[string]string{
	"vendor":   UpstreamVendor,
	"peer_api": UpstreamPeerAPI,
	"new_api":  UpstreamPeerAPI,
}

var authTypes = []string{AuthNone, AuthAPIKey, AuthVertexOAuth, AuthOAuth2JWT}

func (v *validator) upstreams(m *Manifest, path string, value any) {
	kinds, _ := v.stringList(path, value, refuseDuplicates, func(p, s string) (string, bool) {
		kind, ok := upstreamAliases[s]
		if !ok {
			v.addf(p, `must be "vendor" or "peer_api" (also spelled "new_api")`)
		}
		return kind, ok
	})
	m.Upstreams = kinds
}

func (v *validator) auth(m *Manifest, path string, value any) {
	typePath := path
	if obj, ok := objectOf(value); ok {
		// Published plugins and the contract's type file only ever put
		// `type` in the object form, so anything else is a typo or a
		// field this host would silently ignore.
		v.rejectUnknown(path, obj, "type")
		typePath = dot(path, "type")
		value, ok = obj["type"]
		if !ok {
			v.addf(typePath, "is required")
			return
		}
	} else if _, isString := value.(string); !isString {
		v.addf(path, "must be a string or an object {type}, got %s", kindOf(value))
		return
	}
	s, ok := v.stringValue(typePath, value)
	if !ok {
		return
	}
	if !slices.Contains(authTypes, s) {
		v.addf(typePath, `must be one of "none", "api_key", "vertex_oauth", "oauth2_jwt"`)
		return
	}
	m.Auth = Auth{Type: s}
}

func (v *validator) channelTypes(m *Manifest, path string, value any) {
	items, ok := arrayOf(value)
	if !ok {
		v.addf(path, "must be an array of channel type numbers, got %s", kindOf(value))
		return
	}
	out := make([]int, 0, len(items))
	for i, item := range items {
		itemPath := at(path, i)
		n, ok := integerOf(item)
		switch {
		case !ok || n < 1 || n > 1<<31-1:
			v.addf(itemPath, "must be a positive integer")
		case n == ChannelTypePeerAPI || n == ChannelTypeTaskPlugin:
			v.addf(itemPath, "must not be %d; channel types 60 and 61 bind plugins by key", n)
		case slices.Contains(out, int(n)):
			// A repeated type claims nothing more; it is dropped.
		default:
			out = append(out, int(n))
		}
	}
	m.ChannelTypes = out
}
