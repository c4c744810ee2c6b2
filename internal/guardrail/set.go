package guardrail

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
)

// Set is an immutable snapshot of the compiled guardrails. Calls read it
// through Engine.Set without a lock; a change builds a new one.
type Set struct {
	guards  []*guard
	plugins PluginRunner
}

// Len is the number of guardrails in the set.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.guards)
}

// NewSet compiles specs (in their order) into a set; a spec that does not
// compile is reported and left out, so one bad row cannot disable the
// others.
func NewSet(specs []Spec, plugins PluginRunner) (*Set, error) {
	s := &Set{plugins: plugins}
	var errs []error
	for _, sp := range specs {
		g, err := compile(sp)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s.guards = append(s.guards, g)
	}
	return s, errors.Join(errs...)
}

// Source lists the stored guardrails.
type Source interface {
	ListGuardrails(ctx context.Context) ([]Spec, error)
}

// Engine holds the current set behind an atomic pointer and rebuilds it
// from the store when told to or when it polls.
type Engine struct {
	src     Source
	plugins PluginRunner
	log     *slog.Logger
	cur     atomic.Pointer[Set]
	mu      sync.Mutex // one rebuild at a time
}

// NewEngine returns an engine with an empty set; Reload fills it.
func NewEngine(src Source, plugins PluginRunner, log *slog.Logger) *Engine {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Engine{src: src, plugins: plugins, log: log}
	e.cur.Store(&Set{plugins: plugins})
	return e
}

// Set is the current snapshot; it never blocks. A nil engine has no
// guardrails.
func (e *Engine) Set() *Set {
	if e == nil {
		return nil
	}
	return e.cur.Load()
}

// Reload reads every guardrail from the store and swaps in the new set.
func (e *Engine) Reload(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	specs, err := e.src.ListGuardrails(ctx)
	if err != nil {
		return err
	}
	set, cerr := NewSet(specs, e.plugins)
	if cerr != nil {
		e.log.Warn("guardrail left out", "err", cerr)
	}
	e.cur.Store(set)
	return nil
}
