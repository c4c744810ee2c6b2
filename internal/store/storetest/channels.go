package storetest

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func sampleChannel(name string) *store.Channel {
	return &store.Channel{
		Name: name, Type: 1, BaseURL: "https://up.example/v1", Key: "secret-" + name,
		Models: []string{"gpt-a", "gpt-b"}, Groups: []string{"default", "vip"},
		Priority: 5, Weight: 3,
		ModelMapping: map[string]string{"gpt-a": "gpt-a-2024"},
		Settings:     map[string]any{"region": "eu", "retries": float64(2)},
		Status:       store.StatusEnabled,
	}
}

// abilitiesOf returns the abilities of one channel.
func abilitiesOf(t *testing.T, s store.Store, channelID int64) []store.Ability {
	t.Helper()
	all, err := s.Channels().Abilities(ctx(t))
	must(t, err, "abilities")
	var out []store.Ability
	for _, a := range all {
		if a.ChannelID == channelID {
			out = append(out, a)
		}
	}
	return out
}

// wantAbilities builds the expected index rows of a channel, in the
// group, model order Abilities returns.
func wantAbilities(id int64, groups, models []string, priority int64, weight int, enabled bool) []store.Ability {
	var out []store.Ability
	for _, g := range groups {
		for _, m := range models {
			out = append(out, store.Ability{Group: g, Model: m, ChannelID: id, Priority: priority, Weight: weight, Enabled: enabled})
		}
	}
	return out
}

func checkAbilities(t *testing.T, got, want []store.Ability) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("abilities:\n got %+v\nwant %+v", got, want)
	}
}

var channelTests = []namedTest{
	{"create stores every field and indexes group times model", func(t *testing.T, s store.Store) {
		c := sampleChannel("openai")
		must(t, s.Channels().Create(ctx(t), c), "create")
		if c.ID == 0 {
			t.Fatal("Create left ID zero")
		}
		checkUTC(t, "CreatedAt", c.CreatedAt)
		checkUTC(t, "UpdatedAt", c.UpdatedAt)
		for name, get := range map[string]func() (*store.Channel, error){
			"Get":       func() (*store.Channel, error) { return s.Channels().Get(ctx(t), c.ID) },
			"GetByName": func() (*store.Channel, error) { return s.Channels().GetByName(ctx(t), "openai") },
		} {
			got, err := get()
			must(t, err, name)
			if !sameTime(got.CreatedAt, c.CreatedAt) || !sameTime(got.UpdatedAt, c.UpdatedAt) {
				t.Errorf("%s times = %v/%v, want %v/%v", name, got.CreatedAt, got.UpdatedAt, c.CreatedAt, c.UpdatedAt)
			}
			got.CreatedAt, got.UpdatedAt = c.CreatedAt, c.UpdatedAt
			if !reflect.DeepEqual(got, c) {
				t.Errorf("%s = %+v, want %+v", name, *got, *c)
			}
		}
		checkAbilities(t, abilitiesOf(t, s, c.ID), wantAbilities(c.ID, c.Groups, c.Models, 5, 3, true))
	}},
	{"empty maps and lists read back empty, not nil", func(t *testing.T, s store.Store) {
		c := &store.Channel{Name: "bare", Type: 2, Status: store.StatusEnabled}
		must(t, s.Channels().Create(ctx(t), c), "create")
		got, err := s.Channels().Get(ctx(t), c.ID)
		must(t, err, "get")
		if got.Models == nil || got.Groups == nil || got.ModelMapping == nil || got.Settings == nil {
			t.Errorf("nil collections in %+v", *got)
		}
		if len(abilitiesOf(t, s, c.ID)) != 0 {
			t.Error("a channel without groups has abilities")
		}
	}},
	{"duplicate model or group names give one ability each", func(t *testing.T, s store.Store) {
		c := sampleChannel("dups")
		c.Models, c.Groups = []string{"m", "m"}, []string{"g", "g"}
		must(t, s.Channels().Create(ctx(t), c), "create")
		checkAbilities(t, abilitiesOf(t, s, c.ID), wantAbilities(c.ID, []string{"g"}, []string{"m"}, 5, 3, true))
	}},
	{"duplicate name is a conflict on create and on update", func(t *testing.T, s store.Store) {
		must(t, s.Channels().Create(ctx(t), sampleChannel("a")), "create a")
		wantErr(t, s.Channels().Create(ctx(t), sampleChannel("a")), store.ErrConflict, "second a")
		b := sampleChannel("b")
		must(t, s.Channels().Create(ctx(t), b), "create b")
		b.Name = "a"
		wantErr(t, s.Channels().Update(ctx(t), b), store.ErrConflict, "rename b to a")
		checkAbilities(t, abilitiesOf(t, s, b.ID), wantAbilities(b.ID, b.Groups, b.Models, 5, 3, true))
	}},
	{"update rewrites the abilities", func(t *testing.T, s store.Store) {
		c := sampleChannel("c")
		other := sampleChannel("other")
		must(t, s.Channels().Create(ctx(t), c), "create")
		must(t, s.Channels().Create(ctx(t), other), "create other")
		cases := []struct {
			name   string
			change func(c *store.Channel)
			want   func(c *store.Channel) []store.Ability
		}{
			{"new model list and priority", func(c *store.Channel) { c.Models, c.Priority = []string{"gpt-c"}, 9 },
				func(c *store.Channel) []store.Ability {
					return wantAbilities(c.ID, c.Groups, []string{"gpt-c"}, 9, 3, true)
				}},
			{"fewer groups and new weight", func(c *store.Channel) { c.Groups, c.Weight = []string{"vip"}, 7 },
				func(c *store.Channel) []store.Ability {
					return wantAbilities(c.ID, []string{"vip"}, []string{"gpt-c"}, 9, 7, true)
				}},
			{"disabled channel keeps rows but disables them", func(c *store.Channel) { c.Status = store.StatusDisabled },
				func(c *store.Channel) []store.Ability {
					return wantAbilities(c.ID, []string{"vip"}, []string{"gpt-c"}, 9, 7, false)
				}},
			{"re-enabled", func(c *store.Channel) { c.Status = store.StatusEnabled },
				func(c *store.Channel) []store.Ability {
					return wantAbilities(c.ID, []string{"vip"}, []string{"gpt-c"}, 9, 7, true)
				}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				tc.change(c)
				must(t, s.Channels().Update(ctx(t), c), "update")
				checkAbilities(t, abilitiesOf(t, s, c.ID), tc.want(c))
				got, err := s.Channels().Get(ctx(t), c.ID)
				must(t, err, "get")
				if got.Status != c.Status || got.Priority != c.Priority || !slices.Equal(got.Models, c.Models) {
					t.Errorf("stored channel %+v does not match %+v", *got, *c)
				}
			})
		}
		checkAbilities(t, abilitiesOf(t, s, other.ID), wantAbilities(other.ID, other.Groups, other.Models, 5, 3, true))
	}},
	{"delete removes the channel and its abilities only", func(t *testing.T, s store.Store) {
		c, keep := sampleChannel("gone"), sampleChannel("kept")
		must(t, s.Channels().Create(ctx(t), c), "create")
		must(t, s.Channels().Create(ctx(t), keep), "create kept")
		must(t, s.Channels().Delete(ctx(t), c.ID), "delete")
		_, err := s.Channels().Get(ctx(t), c.ID)
		wantErr(t, err, store.ErrNotFound, "get after delete")
		if n := len(abilitiesOf(t, s, c.ID)); n != 0 {
			t.Errorf("%d abilities left after delete", n)
		}
		if n := len(abilitiesOf(t, s, keep.ID)); n != 4 {
			t.Errorf("other channel has %d abilities, want 4", n)
		}
	}},
	{"missing channel is not found everywhere", func(t *testing.T, s store.Store) {
		_, err := s.Channels().Get(ctx(t), 5)
		wantErr(t, err, store.ErrNotFound, "Get")
		_, err = s.Channels().GetByName(ctx(t), "none")
		wantErr(t, err, store.ErrNotFound, "GetByName")
		c := sampleChannel("x")
		c.ID = 5
		wantErr(t, s.Channels().Update(ctx(t), c), store.ErrNotFound, "Update")
		wantErr(t, s.Channels().Delete(ctx(t), 5), store.ErrNotFound, "Delete")
		if n := len(abilitiesOf(t, s, 5)); n != 0 {
			t.Errorf("failed update left %d abilities", n)
		}
	}},
	{"list pages and all returns everything in id order", func(t *testing.T, s store.Store) {
		var ids []int64
		for i := range 4 {
			c := sampleChannel(fmt.Sprintf("ch%d", i))
			must(t, s.Channels().Create(ctx(t), c), "create")
			ids = append(ids, c.ID)
		}
		got, total, err := s.Channels().List(ctx(t), store.Page{Page: 2, PageSize: 3})
		must(t, err, "list")
		if total != 4 || len(got) != 1 || got[0].ID != ids[3] {
			t.Errorf("page 2: total %d, got %d items", total, len(got))
		}
		all, err := s.Channels().All(ctx(t))
		must(t, err, "all")
		var allIDs []int64
		for _, c := range all {
			allIDs = append(allIDs, c.ID)
		}
		if !slices.Equal(allIDs, ids) {
			t.Errorf("All ids = %v, want %v", allIDs, ids)
		}
	}},
	{"many models and groups are all indexed", func(t *testing.T, s store.Store) {
		c := sampleChannel("wide")
		c.Models, c.Groups = nil, nil
		for i := range 120 {
			c.Models = append(c.Models, fmt.Sprintf("model-%03d", i))
		}
		for i := range 6 {
			c.Groups = append(c.Groups, fmt.Sprintf("group-%d", i))
		}
		must(t, s.Channels().Create(ctx(t), c), "create")
		checkAbilities(t, abilitiesOf(t, s, c.ID), wantAbilities(c.ID, c.Groups, c.Models, 5, 3, true))
	}},
}
