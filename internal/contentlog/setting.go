// Package contentlog keeps the request and the answer of the calls whose
// key or group turns content logging on (CONTRACT §20, "Content logging"):
// captured on the relay's one call path up to the setting's bound, written
// off the call path by a bounded writer — to object storage when the usage
// archive's bucket is configured, else to the database — with every
// key-shaped secret and the serving channel's own keys replaced by
// [redacted], and read back by the ref the usage row names.
package contentlog

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Bounds of a log_content object. 64 KiB a side is the contract's default;
// 1 MiB a side keeps one logged call from holding megabytes in the
// writer's queue.
const (
	DefaultMaxKB = 64
	MaxMaxKB     = 1024
)

// Check refuses a log_content object outside its bounds; the message names
// the member as the admin API and the seed check report it.
func Check(lc store.ContentLogging) error {
	if lc.MaxKB < 1 || lc.MaxKB > MaxMaxKB {
		return fmt.Errorf("log_content.max_kb must be a whole number of KiB from 1 to %d, got %d", MaxMaxKB, lc.MaxKB)
	}
	return nil
}

// Policy is every group's content logging, an immutable map swapped on
// each reload like the price snapshot, so a call reads it without a lock.
type Policy struct {
	groups atomic.Pointer[map[string]store.ContentLogging]
}

// Reload reads the groups' settings.
func (p *Policy) Reload(ctx context.Context, groups store.GroupRepo) error {
	gs, err := groups.List(ctx)
	if err != nil {
		return err
	}
	m := map[string]store.ContentLogging{}
	for _, g := range gs {
		if g.LogContent != nil {
			m[g.Name] = *g.LogContent
		}
	}
	p.groups.Store(&m)
	return nil
}

// Limit is how many bytes of each side a call of a key with setting key in
// group keeps; 0 keeps nothing. The key's own setting, when it has one,
// decides alone: a key can turn logging off in a group that has it on.
func (p *Policy) Limit(key *store.ContentLogging, group string) int {
	if key != nil {
		return bytesOf(*key)
	}
	m := p.groups.Load()
	if m == nil || len(*m) == 0 {
		return 0
	}
	g, ok := (*m)[group]
	if !ok {
		return 0
	}
	return bytesOf(g)
}

func bytesOf(lc store.ContentLogging) int {
	if !lc.Enabled {
		return 0
	}
	kb := lc.MaxKB
	if kb <= 0 {
		kb = DefaultMaxKB
	}
	return min(kb, MaxMaxKB) << 10
}
