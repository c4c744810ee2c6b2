package app

import (
	"context"
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// keyChangesSetting is the database setting the command line moves when it
// changes an API key (rotate, disable): every running node polls it and
// drops its key cache when it moves, so the change holds on every node
// within keyWatchEvery (CONTRACT §16: within 2 s), with or without Redis.
// Without it a node would accept a dead secret for as long as it caches
// the key (10 s).
const keyChangesSetting = "keys.changed"

// keyWatchEvery is how often a node reads keyChangesSetting: one primary
// key lookup a second per node.
const keyWatchEvery = time.Second

// settings is the part of the traffic repository the watch reads and the
// command line writes.
type settings interface {
	Setting(ctx context.Context, name string) (string, bool, error)
	PutSetting(ctx context.Context, name, value string) error
}

var _ settings = store.TrafficRepo(nil)

// watchKeyChanges drops the key cache whenever keyChangesSetting moves,
// until ctx ends. A read that fails is tried again at the next tick.
func watchKeyChanges(ctx context.Context, st settings, every time.Duration, invalidate func()) {
	last, _, _ := st.Setting(ctx, keyChangesSetting)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		v, _, err := st.Setting(ctx, keyChangesSetting)
		if err != nil || v == last {
			continue
		}
		last = v
		invalidate()
	}
}

// markKeysChanged moves keyChangesSetting after the command line changed a
// key.
func markKeysChanged(ctx context.Context, st settings) error {
	return st.PutSetting(ctx, keyChangesSetting, strconv.FormatInt(time.Now().UnixNano(), 10))
}
