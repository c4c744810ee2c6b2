package admin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// oldSeedChannel is a channel entry as a release before channel costs
// spelled it; its marks were a digest of this struct's JSON.
type oldSeedChannel struct {
	Name         string
	Type         any
	BaseURL      string
	Key          string
	Models       []string
	Groups       []string
	Priority     int64
	Weight       *int
	ModelMapping map[string]string
	Settings     map[string]any
	Status       string
}

func legacyMark(t *testing.T, v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

func weightOf(t *testing.T, e *env, name string) int {
	c, err := e.d.Store.Channels().GetByName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return c.Weight
}

// The first start of this release on a database an older release seeded
// keeps what administrators edited since, whatever that release recorded
// about its seed (a mark in its own form, or none at all), and still
// creates entries that are new; a later change in the file is applied.
func TestUpgradeKeepsAdministratorsEditsToSeededRecords(t *testing.T) {
	for _, tc := range []struct {
		name string
		mark func(t *testing.T, e *env, sc config.SeedChannel)
	}{
		{"older release's mark", func(t *testing.T, e *env, sc config.SeedChannel) {
			old := oldSeedChannel{sc.Name, sc.Type, sc.BaseURL, sc.Key, sc.Models, sc.Groups, sc.Priority, sc.Weight, sc.ModelMapping, sc.Settings, sc.Status}
			if err := e.d.SeedMarks.PutSetting(context.Background(), "seed:channel:"+sc.Name, legacyMark(t, old)); err != nil {
				t.Fatal(err)
			}
		}},
		{"first release, no marks", func(*testing.T, *env, config.SeedChannel) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			one := 1
			sc := config.SeedChannel{Name: "main", Type: "openai", BaseURL: "http://127.0.0.1:9", Key: "k", Models: []string{"m"}, Weight: &one}
			// What the older release left: the channel it seeded, then an
			// administrator's edit of its weight.
			ch, err := channelFromSeed(sc)
			if err != nil {
				t.Fatal(err)
			}
			ch.Weight = 7
			if err := e.d.Store.Channels().Create(ctx, ch); err != nil {
				t.Fatal(err)
			}
			tc.mark(t, e, sc)
			upgraded := e.d
			upgraded.FreshDatabase = false
			added := config.SeedChannel{Name: "added", Type: "openai", BaseURL: "http://127.0.0.1:9", Key: "k", Models: []string{"m"}}
			seed := config.Seed{Channels: []config.SeedChannel{sc, added}}
			for range 2 { // the first start of the new release, then a restart
				if err := Seed(ctx, upgraded, seed); err != nil {
					t.Fatal(err)
				}
				if w := weightOf(t, e, "main"); w != 7 {
					t.Fatalf("weight = %d after the upgrade, want the administrator's 7", w)
				}
			}
			if _, err := e.d.Store.Channels().GetByName(ctx, "added"); err != nil {
				t.Fatalf("a channel new in the file was not created: %v", err)
			}
			three := 3
			seed.Channels[0].Weight = &three
			if err := Seed(ctx, upgraded, seed); err != nil {
				t.Fatal(err)
			}
			if w := weightOf(t, e, "main"); w != 3 {
				t.Fatalf("weight = %d after the file changed, want the file's 3", w)
			}
		})
	}
}

// A field a later release adds, unset in the file, leaves an unchanged
// entry unchanged: the digest leaves empty fields out.
func TestSeedDigestIgnoresEmptyFields(t *testing.T) {
	one := 1
	a, _, err := entryDigests(oldSeedChannel{Name: "c", Type: "openai", Weight: &one})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := entryDigests(config.SeedChannel{Name: "c", Type: "openai", Weight: &one})
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatal("the same entry digests differently once the struct gains an empty field")
	}
	c, _, _ := entryDigests(config.SeedChannel{Name: "c", Type: "openai", Weight: &one, Status: store.StatusDisabled})
	if c == b {
		t.Fatal("a changed entry digests the same")
	}
}
