package plugin

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
)

// The registry runs guardrail plugins (meta.kind "guardrail") for the
// guardrail engine: the same runtime pools, sandbox, deadline and version
// history as task plugins, reached through the hooks the kind exports.
var _ guardrail.PluginRunner = (*Registry)(nil)

// CheckText calls hook of the active, enabled version of the guardrail
// plugin key with ctx. A plugin that does not export the hook allows; one
// that is missing, disabled, not a guardrail, throws, runs past its
// deadline or answers something unreadable is an error, which the
// guardrail's on_error decides.
func (r *Registry) CheckText(ctx context.Context, key, hook string, in guardrail.PluginContext) (guardrail.PluginVerdict, error) {
	l, err := r.guardrailPlugin(key)
	if err != nil {
		return guardrail.PluginVerdict{}, err
	}
	if !l.Manifest.Hooks.Has(hook) {
		return guardrail.PluginVerdict{Action: guardrail.ActionAllow}, nil
	}
	arg, err := plainValue(in)
	if err != nil {
		return guardrail.PluginVerdict{}, err
	}
	res, err := l.Pool.Call(ctx, hook, arg)
	if err != nil {
		return guardrail.PluginVerdict{}, err
	}
	return readVerdict(res)
}

// CheckGuardrailPlugin refuses a key that is not an installed, enabled
// guardrail plugin, so a guardrail is not saved pointing at nothing.
func (r *Registry) CheckGuardrailPlugin(key string) error {
	_, err := r.guardrailPlugin(key)
	return err
}

// guardrailPlugin finds the plugin a guardrail names: by key, or by its
// meta.name when no key matches.
func (r *Registry) guardrailPlugin(key string) (*Loaded, error) {
	gen := r.Current()
	l, ok := gen.Plugin(key)
	if !ok {
		for _, p := range gen.Plugins() {
			if p.Enabled && p.Manifest.IsGuardrail() && p.Manifest.Name == key {
				l, ok = p, true
				break
			}
		}
	}
	if !ok {
		return nil, fmt.Errorf("no enabled plugin %q is installed", key)
	}
	if !l.Manifest.IsGuardrail() {
		return nil, fmt.Errorf("plugin %q is a task plugin, not a guardrail (meta.kind)", key)
	}
	return l, nil
}

// plainValue turns v into the JSON-shaped values the runtime imports.
func plainValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}

// readVerdict reads a hook's answer: {action, reason?, redactions?}.
func readVerdict(res any) (guardrail.PluginVerdict, error) {
	var v guardrail.PluginVerdict
	b, err := json.Marshal(res)
	if err != nil {
		return v, fmt.Errorf("guardrail plugin answer: %w", err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("guardrail plugin answer must be {action, reason, redactions}: %w", err)
	}
	switch v.Action {
	case guardrail.ActionAllow, guardrail.ActionBlock, guardrail.ActionRedact:
		return v, nil
	}
	return v, fmt.Errorf("guardrail plugin answer: action %q is not allow, block or redact", v.Action)
}
