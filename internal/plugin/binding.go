package plugin

import (
	"context"
	"errors"
	"os"
	"slices"

	"github.com/turnpike-gw/turnpike/internal/providers"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// DefaultBaseURL is the baseUrl of key's active version, or "" when the key
// is not active here or declares none. A type-61 channel saved without a
// base_url takes this one.
func (g *Generation) DefaultBaseURL(key string) string {
	if l, ok := g.active[key]; ok && l.Manifest != nil {
		return l.Manifest.BaseURL
	}
	return ""
}

// BoundChannels lists the channels that bind key: type 61 by
// settings.task_plugin_key, type 60 by task_plugin_key or
// task_extend_plugin_keys, and any other type the plugin's active version
// owns through channelTypes.
func (r *Registry) BoundChannels(ctx context.Context, key string) ([]store.Channel, error) {
	all, err := r.opts.Store.Channels().All(ctx)
	if err != nil {
		return nil, err
	}
	var owned []int
	var models []string
	if l, ok := r.Current().active[key]; ok {
		owned, models = l.Manifest.ChannelTypes, l.Manifest.Models
	}
	var out []store.Channel
	for _, c := range all {
		if bindsKey(&c, key, owned, models) {
			out = append(out, c)
		}
	}
	return out, nil
}

func bindsKey(c *store.Channel, key string, owned []int, models []string) bool {
	switch c.Type {
	case ChannelTypeTaskPlugin:
		return settingString(c.Settings, "task_plugin_key") == key
	case ChannelTypePeerAPI:
		return settingString(c.Settings, "task_plugin_key") == key || slices.Contains(settingStrings(c.Settings, "task_extend_plugin_keys"), key)
	}
	return slices.Contains(owned, c.Type) && legacyBindAllowed(c, key, models)
}

// legacyBindAllowed decides whether the plugin key, which claims c's legacy
// type in channelTypes, is given c and so its key as ctx.apiKey. Task vendor
// types are. A chat provider type (OpenAI, Anthropic, Gemini, ...) is only
// with the administrator's consent, because a plugin must not collect the
// keys of every chat channel of a type just by listing it: either the
// channel's settings.task_plugin_key names the plugin, or the channel was
// made for the plugin — every model it serves is one the plugin declares
// (a Gemini channel listing only the plugin's Veo models), so it carries no
// chat model a key could be meant for.
func legacyBindAllowed(c *store.Channel, key string, pluginModels []string) bool {
	if !providers.HoldsChatKey(c.Type) || settingString(c.Settings, "task_plugin_key") == key {
		return true
	}
	if len(c.Models) == 0 {
		return false
	}
	for _, m := range c.Models {
		if !slices.Contains(pluginModels, m) {
			return false
		}
	}
	return true
}

// InstallFile installs the plugin file at path (seeding's `plugins:`
// entries) and makes it the active version. Running it again with the same
// file changes nothing.
func (r *Registry) InstallFile(ctx context.Context, path string) (*UploadResult, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSourceBytes {
		return nil, errorf(400, "plugin_invalid", "%s is %d bytes; the limit is %d", path, len(data), MaxSourceBytes)
	}
	res, err := r.Upload(ctx, UploadRequest{Source: string(data), Activate: true, Actor: "seed", Origin: OriginSeed, OriginURL: path})
	entry := AuditEntry{Actor: "seed", Action: "seed_install", Outcome: "ok", Detail: path}
	var pe *Error
	switch {
	case errors.As(err, &pe):
		entry.Outcome = pe.Code
	case err != nil:
		entry.Outcome = "internal_error"
	default:
		entry.Key, entry.Version = res.Key, res.Version
	}
	if aerr := r.db.audit(ctx, entry); aerr != nil {
		r.log.Error("task plugin audit row not written", "err", aerr)
	}
	return res, err
}
