package admin

import (
	"encoding/json"
	"github.com/turnpike-gw/turnpike/internal/providers"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

var channelFields = []string{"name", "type", "base_url", "key", "models", "groups", "priority", "weight",
	"model_mapping", "settings", "cost", "status"}

// patchFields adds what only a change of an existing channel may say:
// key_states re-enables single keys.
var patchFields = append(slices.Clone(channelFields), "key_states")

// applyChannel copies the members that were sent onto c, validating each.
func applyChannel(f fields, c *store.Channel) error {
	if f.has("type") {
		t, err := parseChannelType(f["type"])
		if err != nil {
			return err
		}
		c.Type = t
	}
	if err := firstErr(getString(f, "name", &c.Name), getString(f, "key", &c.Key), getString(f, "status", &c.Status)); err != nil {
		return err
	}
	if _, err := get(f, "base_url", &c.BaseURL); err != nil {
		return err
	}
	_, e1 := getList(f, "models", &c.Models)
	_, e2 := getList(f, "groups", &c.Groups)
	_, e3 := get(f, "priority", &c.Priority)
	_, e4 := get(f, "weight", &c.Weight)
	if err := firstErr(e1, e2, e3, e4, getMap(f, "model_mapping", &c.ModelMapping), getMap(f, "settings", &c.Settings), getCost(f, c)); err != nil {
		return err
	}
	return checkChannel(c)
}

func getString(f fields, name string, dst *string) error {
	_, err := get(f, name, dst)
	return err
}

// getMap decodes an object member; null means empty.
func getMap[V any](f fields, name string, dst *map[string]V) error {
	if f.has(name) && f.isNull(name) {
		*dst = map[string]V{}
		return nil
	}
	_, err := get(f, name, dst)
	return err
}

// fillPluginBaseURL gives a task_plugin channel saved without an address
// the address its plugin declares, as the plugin contract promises.
func (d Deps) fillPluginBaseURL(c *store.Channel) {
	if c.Type != upstream.TypeTaskPlugin || c.BaseURL != "" || d.PluginBaseURL == nil {
		return
	}
	if key, _ := c.Settings["task_plugin_key"].(string); key != "" {
		c.BaseURL = d.PluginBaseURL(key)
	}
}

func checkChannel(c *store.Channel) error {
	if err := checkName("name", c.Name, 128); err != nil {
		return err
	}
	if c.Weight < 0 {
		return badField("weight", "must not be negative")
	}
	if base, ok := endpointBase(c.BaseURL); ok {
		return badField("base_url", "is a full endpoint address; give the provider's base address %s and the gateway adds the endpoint", base)
	}
	if c.BaseURL != "" {
		u, err := url.Parse(upstream.NormalizeBaseURL(c.BaseURL))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return badField("base_url", "must be an http or https origin such as https://api.example.com")
		}
		c.BaseURL = upstream.NormalizeBaseURL(c.BaseURL)
	}
	for _, m := range c.Models {
		if m == "" {
			return badField("models", "must not contain empty names")
		}
	}
	if providers.HoldsChatKey(c.Type) {
		if err := routing.CheckKeys(c.Key); err != nil {
			return badField("key", "%s", err.(*routing.KeyError).Message)
		}
	}
	if _, err := routing.ParsePolicy(c.Settings); err != nil {
		pe := err.(*routing.PolicyError)
		return badField("settings."+pe.Field, "%s", pe.Message)
	}
	return checkStatus(c.Status)
}

// maxChannelType bounds numeric types: legacy numbers claimed by plugins
// are small, and anything larger is a typo.
const maxChannelType = 999

// parseChannelType accepts a type name or number (also as a string).
func parseChannelType(raw json.RawMessage) (int, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		return 0, badField("type", "must be a channel type name or number")
	}
	t, err := upstream.ParseType(v)
	if err != nil {
		return 0, badField("type", "is not a known channel type: %v", err)
	}
	if t < 1 || t > maxChannelType {
		return 0, badField("type", "must be between 1 and %d", maxChannelType)
	}
	return t, nil
}

// sameOrigin reports whether two base URLs reach the same scheme, host and
// port. Keys are write-only so that an administrator who may edit a
// channel still cannot read its key; pointing the channel at a host of
// their own and pressing "test" would otherwise hand it over.
func sameOrigin(a, b string) bool {
	ua, errA := url.Parse(upstream.NormalizeBaseURL(a))
	ub, errB := url.Parse(upstream.NormalizeBaseURL(b))
	if errA != nil || errB != nil {
		return false
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host)
}

// keyStates reads key_states, {"<index>": "enabled"}: the keys an
// administrator re-enables, each an index of the channel's n keys.
func keyStates(f fields, n int) ([]int, error) {
	if !f.has("key_states") {
		return nil, nil
	}
	var states map[string]json.RawMessage
	if err := json.Unmarshal(f["key_states"], &states); err != nil || states == nil {
		return nil, badField("key_states", `must be an object such as {"2": "enabled"}`)
	}
	names := make([]string, 0, len(states))
	for name := range states {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]int, 0, len(states))
	for _, name := range names {
		i, err := strconv.Atoi(name)
		if err != nil || i < 0 || i >= n || strconv.Itoa(i) != name {
			return nil, badField("key_states."+name, "is not a key of the channel: its keys are numbered 0 to %d", n-1)
		}
		var state string
		if json.Unmarshal(states[name], &state) != nil || state != "enabled" {
			return nil, badField("key_states."+name, `must be "enabled" (the only state an administrator sets on one key)`)
		}
		out = append(out, i)
	}
	return out, nil
}
