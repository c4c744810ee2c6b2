package admin

import (
	"maps"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Header values in settings.headers often carry credentials (a second API
// key, a proxy's token), so they are handled like the channel key:
// write-only, masked in every answer, kept unless sent again, and needed
// again when base_url moves to another host.
const headersSetting = "headers"

// headerValues is settings.headers as names to values; nil when none.
func headerValues(settings map[string]any) map[string]string {
	hs, ok := settings[headersSetting].(map[string]any)
	if !ok || len(hs) == 0 {
		return nil
	}
	out := make(map[string]string, len(hs))
	for name, v := range hs {
		s, _ := v.(string)
		out[name] = s
	}
	return out
}

// maskedSettings is settings for an answer: each header value masked, the
// rest as stored. The stored map is never changed.
func maskedSettings(settings map[string]any) map[string]any {
	hs := headerValues(settings)
	if hs == nil {
		return settings
	}
	out := maps.Clone(settings)
	masked := make(map[string]any, len(hs))
	for name, v := range hs {
		masked[name] = maskSecret(v)
	}
	out[headersSetting] = masked
	return out
}

// keepHeaders puts back the stored header values a change did not send
// again: every one when settings came without headers (or did not come),
// and each one sent back in its masked form, as a console that saves what
// it was shown does. It reports whether any stored value was kept, which a
// move to another host does not allow.
func keepHeaders(f fields, old map[string]string, c *store.Channel) (kept bool) {
	if len(old) == 0 {
		return false
	}
	if !f.has("settings") {
		return true // c.Settings is still the stored map
	}
	if c.Settings == nil {
		c.Settings = map[string]any{}
	}
	sent, present := c.Settings[headersSetting]
	if !present {
		hs := make(map[string]any, len(old))
		for name, v := range old {
			hs[name] = v
		}
		c.Settings[headersSetting] = hs
		return true
	}
	hs, _ := sent.(map[string]any)
	for name, v := range hs {
		if prev, ok := old[name]; ok && v == maskSecret(prev) {
			hs[name] = prev
			kept = true
		}
	}
	return kept
}
