package store

import (
	"context"
	"time"
)

// ChannelHealth is the shared health record of one key of a channel (key
// index 0 for a single-key channel). Every node reads these records to
// route alike; a node changes one only through HealthRepo.Swap, so each
// transition is made by exactly one node.
type ChannelHealth struct {
	ChannelID int64
	KeyIndex  int
	// State is healthy, cooling or auto_disabled; disabled is the channel's
	// own status field and never stored here.
	State  string
	Reason string
	Since  time.Time
	// Until ends a cool-down; zero when there is none.
	Until time.Time
	// Cooldown is the length of the last cool-down, doubled while failures
	// continue.
	Cooldown time.Duration
	// NextProbe is when an auto-disabled key is probed next; zero when none.
	NextProbe time.Time
	// Version counts the record's changes, for compare-and-swap.
	Version int64
}

// HealthRepo stores channel health records.
type HealthRepo interface {
	All(ctx context.Context) ([]ChannelHealth, error)
	// Swap writes h if the stored record still has version (0: there is no
	// record yet) and stores it as version+1. It reports false, with no
	// error, when another node changed the record first.
	Swap(ctx context.Context, h ChannelHealth, version int64) (bool, error)
	// LeaseProbe moves a key's NextProbe from due to next if it is still due
	// and the key still auto-disabled; the one caller it reports true to
	// may probe.
	LeaseProbe(ctx context.Context, channelID int64, keyIndex int, due, next time.Time) (bool, error)
	// Reset makes every record of a channel healthy (an administrator's
	// doing), moving each version on so no node keeps an older state.
	Reset(ctx context.Context, channelID int64, reason string, at time.Time) error
	// Delete removes every record of a channel.
	Delete(ctx context.Context, channelID int64) error
}
