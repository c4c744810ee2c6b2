package plugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/turnpike-gw/turnpike/internal/plugin/jsrt"
	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Options configure a Registry.
type Options struct {
	// Store is the gateway database; the plugin tables live in it.
	Store store.Store
	// Logger receives registry events and plugin console output.
	Logger *slog.Logger
	// PoolSize bounds concurrent hook calls per plugin version (default 8).
	PoolSize int
	// HookTimeout is each hook call's deadline (default 5 s).
	HookTimeout time.Duration
	// Node names this gateway in runtime status (default: the host name).
	Node string
	// RetireGrace is how long a version no generation serves keeps its
	// runtime pool, for requests still pinned to an older generation
	// (default 2 minutes).
	RetireGrace time.Duration
}

// LoadError is a stored active version that could not be loaded.
type LoadError struct {
	Key     string `json:"key"`
	Version string `json:"version"`
	Message string `json:"message"`
}

// Registry stores plugin versions, builds generations from the database and
// publishes them atomically. Every node runs one; they converge through the
// database revision.
type Registry struct {
	opts Options
	db   *db
	log  *slog.Logger

	current atomic.Pointer[Generation]
	status  atomic.Pointer[buildStatus]
	number  atomic.Int64

	buildMu sync.Mutex // one rebuild at a time
	cacheMu sync.Mutex
	cache   map[string]*entry
}

// buildStatus is what the last rebuild found beside the generation itself.
type buildStatus struct {
	heldBack map[string]bool
	errors   []LoadError
}

// entry is a compiled version with its runtime pool, shared by every
// generation that serves the same key, version and source.
type entry struct {
	c    *compiled
	pool *jsrt.Pool
	// live is set while the current generation serves the entry; touched
	// is when it stopped being live or was last loaded on demand.
	live    bool
	lazy    bool
	touched time.Time
}

// NewRegistry returns a registry with an empty generation; Load fills it.
func NewRegistry(opts Options) *Registry {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.PoolSize <= 0 {
		opts.PoolSize = jsrt.DefaultPoolSize
	}
	if opts.HookTimeout <= 0 {
		opts.HookTimeout = jsrt.DefaultHookTimeout
	}
	if opts.RetireGrace <= 0 {
		opts.RetireGrace = 2 * time.Minute
	}
	if opts.Node == "" {
		opts.Node, _ = os.Hostname()
	}
	r := &Registry{opts: opts, log: opts.Logger.With("component", "task_plugin"),
		db: &db{repo: opts.Store.Plugins()}, cache: map[string]*entry{}}
	r.current.Store(NewGeneration(0, "", nil, nil))
	r.status.Store(&buildStatus{heldBack: map[string]bool{}})
	return r
}

// Current returns the generation new requests should pin. It never blocks.
func (r *Registry) Current() *Generation { return r.current.Load() }

// Node is the name this registry reports in runtime status.
func (r *Registry) Node() string { return r.opts.Node }

// Load builds the first generation from the database.
func (r *Registry) Load(ctx context.Context) error { return r.Rebuild(ctx) }

// Watch polls the database revision every interval and rebuilds when another
// node (or this one) changed it, until ctx ends. It also closes the pools of
// versions that no generation has served for the grace period.
func (r *Registry) Watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := r.Refresh(ctx); err != nil {
			r.log.Warn("task plugin refresh failed", "err", err)
			continue
		}
		r.reap(time.Now())
	}
}

// Refresh rebuilds the generation when the database revision moved (a
// change made by another node). Watch calls it every interval; a node told
// of a change (the Redis change channel) calls it at once.
func (r *Registry) Refresh(ctx context.Context) error {
	rev, err := r.db.revision(ctx)
	if err != nil {
		return err
	}
	if rev != r.Current().Revision {
		return r.Rebuild(ctx)
	}
	return nil
}

// Close closes every runtime pool. Generations still held become unusable.
func (r *Registry) Close() {
	r.cacheMu.Lock()
	defer r.cacheMu.Unlock()
	for id, e := range r.cache {
		e.pool.Close()
		delete(r.cache, id)
	}
}

// Rebuild reads the database and publishes a new generation. Versions whose
// key, version and source are unchanged keep their compiled program and pool.
// A stored version that no longer loads is left out and reported in status.
func (r *Registry) Rebuild(ctx context.Context) error {
	r.buildMu.Lock()
	defer r.buildMu.Unlock()
	rev, err := r.db.revision(ctx)
	if err != nil {
		return fmt.Errorf("plugin: read revision: %w", err)
	}
	states, err := r.db.states(ctx)
	if err != nil {
		return fmt.Errorf("plugin: read plugin state: %w", err)
	}
	used := map[string]bool{}
	var active []*Loaded
	var loadErrs []LoadError
	for _, s := range states {
		id, e, err := r.entryFor(ctx, s.Key, s.ActiveVersion)
		if err != nil {
			loadErrs = append(loadErrs, LoadError{Key: s.Key, Version: s.ActiveVersion, Message: err.Error()})
			r.log.Warn("task plugin version does not load", "key", s.Key, "version", s.ActiveVersion, "err", err)
			continue
		}
		used[id] = true
		active = append(active, e.loaded(s.Enabled))
	}
	held := r.resolveConflicts(active, states)
	extra := r.lazyExtras(ctx, used)
	gen := NewGeneration(r.number.Add(1), rev, active, extra)
	r.markLive(used)
	r.current.Store(gen)
	r.status.Store(&buildStatus{heldBack: held, errors: loadErrs})
	r.log.Info("task plugin generation published", "generation", gen.Number, "revision", rev, "plugins", len(active))
	return nil
}

func (e *entry) loaded(enabled bool) *Loaded {
	return &Loaded{Key: e.c.manifest.Key, Version: e.c.manifest.Version, Manifest: e.c.manifest, Pool: e.pool, Enabled: enabled, Source: e.c.source}
}

// resolveConflicts disables plugins that would take a channel type or route
// another enabled plugin already serves. Plugins not forced in win over held
// back ones, then keys decide, so every node resolves the same way.
func (r *Registry) resolveConflicts(active []*Loaded, states []State) map[string]bool {
	flagged := map[string]bool{}
	for _, s := range states {
		flagged[s.Key] = s.HeldBack
	}
	order := append([]*Loaded(nil), active...)
	sort.SliceStable(order, func(i, j int) bool {
		if flagged[order[i].Key] != flagged[order[j].Key] {
			return !flagged[order[i].Key]
		}
		return order[i].Key < order[j].Key
	})
	held := map[string]bool{}
	var accepted []*manifest.Manifest
	for _, l := range order {
		if !l.Enabled {
			continue
		}
		if problems := manifest.Conflicts(l.Manifest, accepted); len(problems) > 0 {
			l.Enabled = false
			held[l.Key] = true
			if !flagged[l.Key] {
				r.log.Warn("task plugin disabled by a conflict", "key", l.Key, "version", l.Version, "conflict", problems.Error())
			}
			continue
		}
		accepted = append(accepted, l.Manifest)
	}
	return held
}

// lazyExtras returns the versions loaded on demand for polling that are
// still cached and not active, so the new generation keeps offering them.
func (r *Registry) lazyExtras(ctx context.Context, used map[string]bool) []*Loaded {
	r.cacheMu.Lock()
	var candidates []*entry
	for id, e := range r.cache {
		if e.lazy && !used[id] {
			candidates = append(candidates, e)
		}
	}
	r.cacheMu.Unlock()
	var out []*Loaded
	for _, e := range candidates {
		v, err := r.db.version(ctx, e.c.manifest.Key, e.c.manifest.Version)
		if err != nil || v.SHA256 != e.c.sha256 {
			continue
		}
		out = append(out, e.loaded(false))
	}
	return out
}

// markLive records which entries the new generation serves; the others start
// their grace period now.
func (r *Registry) markLive(used map[string]bool) {
	r.cacheMu.Lock()
	defer r.cacheMu.Unlock()
	now := time.Now()
	for id, e := range r.cache {
		switch {
		case used[id]:
			e.live = true
		case e.live:
			e.live = false
			e.touched = now
		}
	}
}

// reap closes pools that no generation has served for the grace period.
func (r *Registry) reap(now time.Time) {
	r.cacheMu.Lock()
	defer r.cacheMu.Unlock()
	for id, e := range r.cache {
		if !e.live && now.Sub(e.touched) > r.opts.RetireGrace {
			e.pool.Close()
			delete(r.cache, id)
			r.log.Debug("task plugin runtime retired", "key", e.c.manifest.Key, "version", e.c.manifest.Version)
		}
	}
}

func cacheID(key, version, sha string) string { return key + "@" + version + "#" + sha }

// entryFor returns the cached entry of a stored version, compiling it on the
// first use of this key, version and source.
func (r *Registry) entryFor(ctx context.Context, key, version string) (string, *entry, error) {
	v, err := r.db.version(ctx, key, version)
	if err != nil {
		return "", nil, err
	}
	id := cacheID(key, version, v.SHA256)
	r.cacheMu.Lock()
	e, ok := r.cache[id]
	r.cacheMu.Unlock()
	if ok {
		return id, e, nil
	}
	src, err := r.db.source(ctx, key, version)
	if err != nil {
		return "", nil, err
	}
	c, problems := prepare(key+"@"+version+".js", src)
	if len(problems) > 0 {
		return "", nil, problems
	}
	if c.manifest.Key != key || c.manifest.Version != version {
		return "", nil, fmt.Errorf("stored source declares %s@%s", c.manifest.Key, c.manifest.Version)
	}
	e = &entry{c: c, touched: time.Now(), pool: r.newPool(c)}
	r.cacheMu.Lock()
	defer r.cacheMu.Unlock()
	if prev, ok := r.cache[id]; ok {
		// A concurrent LoadVersion compiled it first; keep one pool.
		e.pool.Close()
		return id, prev, nil
	}
	r.cache[id] = e
	return id, e, nil
}

func (r *Registry) newPool(c *compiled) *jsrt.Pool {
	return jsrt.NewPool(c.prog, jsrt.PoolOptions{Size: r.opts.PoolSize, HookTimeout: r.opts.HookTimeout,
		Logger: r.log.With("plugin", c.manifest.Key, "plugin_version", c.manifest.Version)})
}

// LoadVersion returns a stored version for polling the tasks it produced,
// from the current generation when it is there and otherwise compiled on
// demand (kept while it is used, then retired like any other). Enabled is
// true only for the active, enabled version.
func (r *Registry) LoadVersion(ctx context.Context, key, version string) (*Loaded, error) {
	if l, ok := r.Current().Version(key, version); ok {
		return l, nil
	}
	_, e, err := r.entryFor(ctx, key, version)
	if errors.Is(err, store.ErrNotFound) {
		return nil, versionNotFound(key, version)
	}
	if err != nil {
		return nil, err
	}
	r.cacheMu.Lock()
	if !e.live {
		e.lazy = true
		e.touched = time.Now()
	}
	r.cacheMu.Unlock()
	return e.loaded(false), nil
}

// heldBack reports whether the last rebuild kept key disabled by a conflict.
func (r *Registry) heldBack(key string) bool { return r.status.Load().heldBack[key] }

// loadErrors returns the active versions the last rebuild could not load.
func (r *Registry) loadErrors() []LoadError { return r.status.Load().errors }
