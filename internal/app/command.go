package app

import (
	"context"
)

// What the command line (internal/cli) needs from the app beyond New,
// Prepare and Serve: the server's own wiring stays unexported.

// Settings is the part of the traffic repository the key watch reads and
// the command line writes.
type Settings = settings

// MarkKeysChanged tells every running node, through the database setting
// they poll, that the command line changed an API key.
func MarkKeysChanged(ctx context.Context, st Settings) error { return markKeysChanged(ctx, st) }

// StartFacts is what the start line names after the address.
func (a *App) StartFacts() string { return a.startFacts() }

// Shutdown releases what New and Prepare opened, for a start that fails
// before Serve.
func (a *App) Shutdown() error { return a.shutdown() }

// WatchKeyChanges is a node's watch of MarkKeysChanged, at its own pace.
func WatchKeyChanges(ctx context.Context, st Settings, invalidate func()) {
	watchKeyChanges(ctx, st, keyWatchEvery, invalidate)
}
