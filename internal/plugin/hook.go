package plugin

import (
	"fmt"

	"github.com/turnpike-gw/turnpike/internal/plugin/jsrt"
)

// HookError is a hook that threw: its name and message as the plugin wrote
// them. Callers outside plugin see the runtime only through these names, so
// the sandbox stays replaceable behind this package.
type HookError = jsrt.HookError

// ErrHookTimeout is a hook that ran past its deadline.
var ErrHookTimeout = jsrt.ErrHookTimeout

// LoadSource compiles and validates a plugin module the way uploads are, and
// returns it enabled with a pool of default size. It is for callers that hold
// a module outside the registry (tests, offline tools); the caller closes
// the pool.
func LoadSource(name, source string) (*Loaded, error) {
	c, problems := prepare(name, source)
	if len(problems) > 0 {
		return nil, fmt.Errorf("plugin %s: %v", name, problems)
	}
	pool := jsrt.NewPool(c.prog, jsrt.PoolOptions{})
	return &Loaded{Key: c.manifest.Key, Version: c.manifest.Version, Manifest: c.manifest, Pool: pool, Enabled: true, Source: source}, nil
}
