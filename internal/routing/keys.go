package routing

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// Key selection (CONTRACT §9 "Several keys per channel"): settings.key_selection.
const (
	KeySelectionRandom     = "random"
	KeySelectionRoundRobin = "round_robin"
)

// SplitKeys is a channel's key list: one key per line, spaces and carriage
// returns around each trimmed, empty lines dropped; a key's index is its
// position among the lines that are left. A channel with no key at all (an
// upstream that needs none) has one empty key, index 0. Two kinds of key
// are one credential whatever their lines: the key of a task channel
// (peer_api, task_plugin), which the task driver sends as it is, and a JSON
// credential such as a service account (text that starts with "{").
func SplitKeys(channelType int, key string) []string {
	trimmed := strings.TrimSpace(key)
	if upstream.IsTaskOnly(channelType) || strings.HasPrefix(trimmed, "{") {
		return []string{trimmed}
	}
	var keys []string
	for line := range strings.SplitSeq(key, "\n") {
		if k := strings.TrimSpace(line); k != "" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return []string{""}
	}
	return keys
}

// KeyError says what is wrong with a channel's key list, never quoting
// the key.
type KeyError struct{ Message string }

func (e *KeyError) Error() string { return "key " + e.Message }

// CheckKeys refuses a key list that cannot be what an administrator meant:
// text made only of blank lines, or a line with a space or tab inside it (two
// keys on one line, or a key pasted with its label). A JSON credential is
// left to its adapter. The caller applies it only to channel types with a
// chat wire of their own (providers.HoldsChatKey); other types keep their
// key as their plugin reads it, and routing does not know the catalog.
func CheckKeys(key string) error {
	if key == "" {
		return nil
	}
	trimmed := strings.TrimSpace(key)
	if trimmed == "" {
		return &KeyError{"holds only blank lines: put one key per line, or send an empty key for an upstream that needs none"}
	}
	if strings.HasPrefix(trimmed, "{") {
		return nil
	}
	line := 0
	for text := range strings.SplitSeq(key, "\n") {
		line++
		if strings.IndexFunc(strings.TrimSpace(text), unicode.IsSpace) >= 0 {
			return &KeyError{fmt.Sprintf("line %d has a space inside it: put one key per line, each without spaces", line)}
		}
	}
	return nil
}

// MaskKey hints at one key without revealing it (store.MaskSecret).
func MaskKey(k string) string { return store.MaskSecret(k) }

// Redact replaces every key of the channel in text (an upstream error that
// echoes the credential it refused) with ****; keys shorter than four
// characters are left, as they would match ordinary text.
func (c *Channel) Redact(text string) string {
	r := c.ring()
	if len(r.keys) == 1 && len(c.Key) >= 4 && c.Key != r.keys[0] {
		text = strings.ReplaceAll(text, c.Key, "****")
	}
	for _, k := range r.keys {
		if len(k) >= 4 && strings.Contains(text, k) {
			text = strings.ReplaceAll(text, k, "****")
		}
	}
	return text
}

// keyRing is a channel's parsed key list, shared by the snapshot's channel
// and its one-key copies.
type keyRing struct {
	keys       []string
	roundRobin bool
	// next is the round-robin position; atomic, so picking takes no lock.
	next atomic.Uint64
	// one holds the channel with each key alone, made with the snapshot so
	// an attempt allocates nothing.
	one []*Channel
	// stats are the channel's load and speed counters (stats.go), set by
	// Router.Swap before the snapshot is published.
	stats *chanStats
}

// newChannel reads a channel's policy and key list once, for a snapshot.
func newChannel(sc Channel) *Channel {
	c := &sc
	c.Policy = PolicyOf(c.Settings)
	ring := &keyRing{keys: SplitKeys(c.Type, c.Key), roundRobin: c.Policy.KeySelection == KeySelectionRoundRobin}
	c.keys = ring
	ring.one = make([]*Channel, len(ring.keys))
	for i, k := range ring.keys {
		if i == 0 && k == c.Key {
			ring.one[0] = c
			continue
		}
		cp := *c
		cp.Key, cp.KeyIndex = k, i
		ring.one[i] = &cp
	}
	return c
}

// ring is the channel's key list; a Channel built by hand (tests, a
// channel health does not know) is parsed on demand.
func (c *Channel) ring() *keyRing {
	if c.keys != nil {
		return c.keys
	}
	return &keyRing{keys: SplitKeys(c.Type, c.Key), roundRobin: c.Policy.KeySelection == KeySelectionRoundRobin}
}

// Keys is the channel's key list (SplitKeys); on a one-key copy too, the
// whole list. The slice is shared: do not change it.
func (c *Channel) Keys() []string { return c.ring().keys }

// KeyCount is how many keys the channel has (at least one).
func (c *Channel) KeyCount() int { return len(c.ring().keys) }

// Routable reports whether routing may use the channel now: at least one
// of its keys is routable by health.
func (c *Channel) Routable(h *Health) bool {
	for i := range c.ring().keys {
		if h.Routable(c.ID, i) {
			return true
		}
	}
	return false
}

// PickKey chooses the key for one attempt among those health says are
// routable: at random, or in turn with settings.key_selection round_robin.
// ok is false when no key is usable now.
func (c *Channel) PickKey(h *Health) (index int, key string, ok bool) {
	r := c.ring()
	n := len(r.keys)
	if n == 1 {
		return 0, r.keys[0], h.Routable(c.ID, 0)
	}
	if r.roundRobin {
		start := int((r.next.Add(1) - 1) % uint64(n))
		for j := 0; j < n; j++ {
			if i := (start + j) % n; h.Routable(c.ID, i) {
				return i, r.keys[i], true
			}
		}
		return 0, "", false
	}
	usable := 0
	for i := range r.keys {
		if h.Routable(c.ID, i) {
			usable++
		}
	}
	if usable == 0 {
		return 0, "", false
	}
	nth := rand.IntN(usable)
	for i := range r.keys {
		if h.Routable(c.ID, i) {
			if nth == 0 {
				return i, r.keys[i], true
			}
			nth--
		}
	}
	// Health changed between the two passes; take the last usable key.
	for i := n - 1; i >= 0; i-- {
		if h.Routable(c.ID, i) {
			return i, r.keys[i], true
		}
	}
	return 0, "", false
}

// WithKey is the channel as one attempt uses it: Key holds only key index
// of the list and KeyIndex says which. Everything else is the channel's.
// An index out of the list gives the channel unchanged.
func (c *Channel) WithKey(index int) *Channel {
	r := c.ring()
	if index < 0 || index >= len(r.keys) {
		return c
	}
	if r.one != nil {
		return r.one[index]
	}
	cp := *c
	cp.Key, cp.KeyIndex = r.keys[index], index
	return &cp
}
