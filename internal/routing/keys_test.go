package routing

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

func TestSplitKeys(t *testing.T) {
	cases := []struct {
		name string
		typ  int
		key  string
		want []string
	}{
		{"one key", upstream.TypeOpenAI, "sk-one", []string{"sk-one"}},
		{"one key with a trailing newline", upstream.TypeOpenAI, "sk-one\r\n", []string{"sk-one"}},
		{"several keys, blank lines and spaces dropped", upstream.TypeOpenAI, " sk-a \r\n\n\tsk-b\n  \nsk-c", []string{"sk-a", "sk-b", "sk-c"}},
		{"no key is one empty key", upstream.TypeOllama, "", []string{""}},
		{"blank lines only are one empty key", upstream.TypeOpenAI, "\n \n", []string{""}},
		{"a JSON credential is one key", 41, "{\n  \"type\": \"service_account\"\n}\n", []string{"{\n  \"type\": \"service_account\"\n}"}},
		{"a task channel's key is one key", upstream.TypeTaskPlugin, "line one\nline two", []string{"line one\nline two"}},
		{"a peer gateway's key is one key", upstream.TypePeerAPI, "sk-peer\n", []string{"sk-peer"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := SplitKeys(tc.typ, tc.key); !slices.Equal(got, tc.want) {
				t.Fatalf("SplitKeys = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCheckKeys(t *testing.T) {
	const secret = "sk-secret-part"
	cases := []struct {
		name string
		key  string
		want string // part of the message; "" when accepted
	}{
		{"one key", "sk-a", ""},
		{"several keys with blank lines and CRLF", "sk-a\r\n\r\nsk-b\n", ""},
		{"no key", "", ""},
		{"blank lines only", " \n\t\n", "only blank lines"},
		{"two keys on one line", "sk-a\n" + secret + " sk-c", "line 2 has a space"},
		{"a key with its label", "key:\t" + secret, "line 1 has a space"},
		{"a JSON credential", "{\n \"type\": \"service_account\"\n}", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckKeys(tc.key)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the error quotes the key: %v", err)
			}
		})
	}
}

// keyed is a snapshot channel with three keys under the given selection.
func keyed(t *testing.T, selection string) (*Router, *Channel) {
	t.Helper()
	settings := map[string]any{}
	if selection != "" {
		settings["key_selection"] = selection
	}
	c := ch(1, 0, 1, "enabled")
	c.Key, c.Settings = "sk-key0\nsk-key1\nsk-key2", settings
	r := NewRouter(NewHealth(nil, nil))
	r.Swap(NewTable([]store.Channel{c}))
	return r, r.Table().Channel(1)
}

// refuse auto-disables one key as a 401 from it would.
func refuse(h *Health, c *Channel, key int) {
	h.Report(c.WithKey(key), key, &ir.Error{UpstreamStatus: 401, Message: "Incorrect API key provided: " + c.Keys()[key]})
}

func picks(t *testing.T, h *Health, c *Channel, n int) []int {
	t.Helper()
	out := make([]int, 0, n)
	for range n {
		i, k, ok := c.PickKey(h)
		if !ok {
			t.Fatal("no key picked")
		}
		if k != c.Keys()[i] {
			t.Fatalf("key %q at index %d, want %q", k, i, c.Keys()[i])
		}
		out = append(out, i)
	}
	return out
}

func TestPickKey(t *testing.T) {
	cases := []struct {
		name      string
		selection string
		out       []int // keys taken out first
		check     func(t *testing.T, got []int)
	}{
		{"random uses every key", "", nil, func(t *testing.T, got []int) {
			counts := map[int]int{}
			for _, i := range got {
				counts[i]++
			}
			for i := range 3 {
				// About 1000 each; generous slack against flakiness.
				if counts[i] < 700 {
					t.Fatalf("key %d picked %d of %d times", i, counts[i], len(got))
				}
			}
		}},
		{"random skips a refused key", "random", []int{1}, func(t *testing.T, got []int) {
			if slices.Contains(got, 1) || !slices.Contains(got, 0) || !slices.Contains(got, 2) {
				t.Fatalf("picks %v", got[:10])
			}
		}},
		{"round robin goes in order", "round_robin", nil, func(t *testing.T, got []int) {
			if !slices.Equal(got[:7], []int{0, 1, 2, 0, 1, 2, 0}) {
				t.Fatalf("order %v", got[:7])
			}
		}},
		{"round robin skips a refused key", "round_robin", []int{1}, func(t *testing.T, got []int) {
			if !slices.Equal(got[:6], []int{0, 2, 2, 0, 2, 2}) {
				t.Fatalf("order %v", got[:6])
			}
		}},
		{"one key left takes every call", "", []int{0, 2}, func(t *testing.T, got []int) {
			for _, i := range got {
				if i != 1 {
					t.Fatalf("picked key %d", i)
				}
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, c := keyed(t, tc.selection)
			for _, i := range tc.out {
				refuse(r.Health, c, i)
			}
			if !c.Routable(r.Health) || len(r.Plan("default", "m", 1, nil)) != 1 {
				t.Fatal("the channel left routing while a key is usable")
			}
			tc.check(t, picks(t, r.Health, c, 3000))
		})
	}
}

func TestAChannelWithNoUsableKeyIsNotRouted(t *testing.T) {
	for _, selection := range []string{"random", "round_robin"} {
		t.Run(selection, func(t *testing.T) {
			r, c := keyed(t, selection)
			refuse(r.Health, c, 0)
			refuse(r.Health, c, 1)
			r.Health.coolKey(c, 2, "429: slow down", 0)
			if _, _, ok := c.PickKey(r.Health); ok {
				t.Fatal("a key was picked")
			}
			if c.Routable(r.Health) || len(r.Plan("default", "m", 1, nil)) != 0 {
				t.Fatal("a channel without a usable key is still routed")
			}
			st := r.Health.ChannelStatus(1, c.KeyCount())
			if st.State != StateCooling || st.Until == nil || !strings.Contains(st.Reason, "key 2: 429") {
				t.Fatalf("channel status %+v, want cooling by key 2", st)
			}
			r.Health.ResetKey(1, 0, "re-enabled by an administrator")
			if i, _, ok := c.PickKey(r.Health); !ok || i != 0 {
				t.Fatalf("after re-enabling key 0: picked %d, %v", i, ok)
			}
			if st := r.Health.ChannelStatus(1, c.KeyCount()); st.State != StateHealthy {
				t.Fatalf("channel status %+v, want healthy", st)
			}
		})
	}
}

func TestAKeyIsTakenOutOnItsOwn(t *testing.T) {
	r, c := keyed(t, "")
	var events []HealthEvent
	r.Health.SetOnChange(func(ev HealthEvent) { events = append(events, ev) })
	refuse(r.Health, c, 1)
	for i, want := range []string{StateHealthy, StateAutoDisabled, StateHealthy} {
		if got := r.Health.Status(1, i).State; got != want {
			t.Fatalf("key %d is %s, want %s", i, got, want)
		}
	}
	if len(events) != 1 || events[0].KeyIndex != 1 || events[0].Up {
		t.Fatalf("events %+v, want one channel_down for key 1", events)
	}
	if r := r.Health.Status(1, 1).Reason; strings.Contains(r, "sk-key1") || !strings.Contains(r, "401") {
		t.Fatalf("reason %q: want the status, never the key", r)
	}
	if st := r.Health.ChannelStatus(1, 3); st.State != StateHealthy {
		t.Fatalf("channel status %+v, want healthy while keys are left", st)
	}
}

func TestWithKeyCarriesOneKey(t *testing.T) {
	_, c := keyed(t, "")
	for i, want := range []string{"sk-key0", "sk-key1", "sk-key2"} {
		k := c.WithKey(i)
		if k.Key != want || k.KeyIndex != i || k.ID != c.ID || k.KeyCount() != 3 {
			t.Fatalf("WithKey(%d) = key %q index %d", i, k.Key, k.KeyIndex)
		}
	}
	if c.Key != "sk-key0\nsk-key1\nsk-key2" || c.KeyIndex != 0 {
		t.Fatal("the snapshot's channel changed")
	}
	one := NewTable([]store.Channel{{ID: 2, Key: "sk-only", Status: "enabled"}}).Channel(2)
	if one.WithKey(0) != one {
		t.Fatal("a single-key channel is not its own one-key value")
	}
	h := NewHealth(nil, nil)
	if n := testing.AllocsPerRun(100, func() {
		i, _, _ := c.PickKey(h)
		_ = c.WithKey(i)
	}); n != 0 {
		t.Fatalf("picking a key allocates %v times", n)
	}
}

func TestResetKeyIsSharedWithTheOtherNode(t *testing.T) {
	repo := newMemRepo()
	a, b := NewHealth(repo, nil), NewHealth(repo, nil)
	c := newChannel(Channel{Channel: store.Channel{ID: 1, Name: "c", Key: "k0\nk1"}})
	a.Report(c.WithKey(1), 1, &ir.Error{UpstreamStatus: 403})
	if err := b.Sync(context.Background()); err != nil || b.Routable(1, 1) || !b.Routable(1, 0) {
		t.Fatalf("b did not see key 1 go out alone: %v", err)
	}
	b.ResetKey(1, 1, "re-enabled by an administrator")
	if err := a.Sync(context.Background()); err != nil || !a.Routable(1, 1) {
		t.Fatalf("a did not see the key come back: %v", err)
	}
	if st := a.Status(1, 1); st.State != StateHealthy {
		t.Fatalf("status %+v", st)
	}
}

func TestRedactMasksEveryKeyOfTheChannel(t *testing.T) {
	_, c := keyed(t, "")
	cases := []struct {
		name string
		ch   *Channel
	}{{"the snapshot's channel", c}, {"a one-key value", c.WithKey(2)}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.ch.Redact("sk-key0 and sk-key1, then sk-key2 and sk-other")
			if got != "**** and ****, then **** and sk-other" {
				t.Fatalf("Redact = %q", got)
			}
		})
	}
	short := NewTable([]store.Channel{{ID: 3, Key: " abc\n"}}).Channel(3)
	if got := short.Redact("abc is ordinary text"); got != "abc is ordinary text" {
		t.Fatalf("a short key masked ordinary text: %q", got)
	}
	whole := NewTable([]store.Channel{{ID: 4, Key: "sk-whole-key\n"}}).Channel(4)
	if got := whole.Redact("key sk-whole-key\n refused"); got != "key **** refused" {
		t.Fatalf("Redact = %q", got)
	}
}
