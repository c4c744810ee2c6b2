package plugin

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/plugin/jsrt"
)

// dryRun validates a source without storing it and, given a hook, runs that
// hook once in a throwaway runtime. The runtime has no network or other I/O,
// so the hook cannot reach anything.
func (a *AdminAPI) dryRun(w http.ResponseWriter, r *http.Request, c *call) error {
	var b struct {
		Source string `json:"source"`
		Hook   string `json:"hook"`
		Args   []any  `json:"args"`
	}
	if err := readJSON(w, r, &b, "source", "hook", "args"); err != nil {
		return err
	}
	comp, problems := prepare("plugin.js", b.Source)
	if len(problems) > 0 {
		return invalid(problems)
	}
	c.key, c.version, c.detail = comp.manifest.Key, comp.manifest.Version, b.Hook
	out := map[string]any{"valid": true, "key": comp.manifest.Key, "version": comp.manifest.Version, "meta": comp.manifest}
	if len(comp.manifest.Inferred) > 0 {
		out["inferred"] = comp.manifest.Inferred
	}
	if b.Hook != "" {
		if !slices.Contains(comp.functions, b.Hook) {
			return badRequest("hook %q is not an exported function; exported: %v", b.Hook, comp.functions)
		}
		result, hookErr := a.runHook(r.Context(), comp, b.Hook, b.Args)
		if hookErr != nil {
			out["error"] = hookErr
		} else {
			out["result"] = result
		}
	}
	apijson.Write(w, http.StatusOK, out)
	return nil
}

// hookFailure is a dry-run hook's error as the caller sees it.
type hookFailure struct {
	Name    string `json:"name,omitempty"`
	Message string `json:"message"`
}

func (a *AdminAPI) runHook(ctx context.Context, comp *compiled, hook string, args []any) (any, *hookFailure) {
	pool := jsrt.NewPool(comp.prog, jsrt.PoolOptions{Size: 1, HookTimeout: a.reg.opts.HookTimeout, Logger: a.log})
	defer pool.Close()
	result, err := pool.Call(ctx, hook, args...)
	if err == nil {
		return result, nil
	}
	var he *jsrt.HookError
	switch {
	case errors.As(err, &he):
		return nil, &hookFailure{Name: he.Name, Message: he.Message}
	case errors.Is(err, jsrt.ErrHookTimeout):
		return nil, &hookFailure{Message: "the hook ran past its deadline of " + a.reg.opts.HookTimeout.String()}
	}
	return nil, &hookFailure{Message: err.Error()}
}

// runtimePlugin is one plugin as this node's generation serves it.
type runtimePlugin struct {
	Key       string      `json:"key"`
	Version   string      `json:"version"`
	Enabled   bool        `json:"enabled"`
	HeldBack  bool        `json:"held_back"`
	Routes    []routeView `json:"routes"`
	Protocols []string    `json:"protocols"`
	Claims    []claimView `json:"protocol_claims,omitempty"`
	Types     []int       `json:"channel_types"`
}

type routeView struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Type   string `json:"type"`
}

type claimView struct {
	Name     string   `json:"name"`
	Models   []string `json:"models,omitempty"`
	Supports []string `json:"supports,omitempty"`
}

func (a *AdminAPI) runtimeStatus(w http.ResponseWriter, r *http.Request, _ *call) error {
	gen := a.reg.Current()
	plugins := []runtimePlugin{}
	for _, l := range gen.Plugins() {
		p := runtimePlugin{Key: l.Key, Version: l.Version, Enabled: l.Enabled, HeldBack: a.reg.heldBack(l.Key),
			Routes: []routeView{}, Protocols: []string{}, Types: l.Manifest.ChannelTypes}
		for _, rt := range l.Manifest.Routes {
			p.Routes = append(p.Routes, routeView{Method: rt.Method, Path: rt.Path, Type: rt.Type})
		}
		for _, c := range l.Manifest.Protocols {
			p.Protocols = append(p.Protocols, c.Name)
			p.Claims = append(p.Claims, claimView{Name: c.Name, Models: c.Models, Supports: c.Supports})
		}
		plugins = append(plugins, p)
	}
	errs := a.reg.loadErrors()
	if errs == nil {
		errs = []LoadError{}
	}
	out := map[string]any{"generation": gen.Number, "revision": gen.Revision, "node": a.reg.Node(), "plugins": plugins, "errors": errs}
	if rev, err := a.reg.db.revision(r.Context()); err != nil {
		out["database_error"] = "the database revision could not be read"
	} else {
		out["database_revision"] = rev
	}
	apijson.Write(w, http.StatusOK, out)
	return nil
}
