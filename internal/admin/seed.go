package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/users"
)

// Seed applies the seed section of the configuration file by natural key.
// Each record is written only when its entry in the file is new or has
// changed since it was last applied, by this node or any other (a digest
// of the entry is kept per record, see SeedMarks), so a restart with an
// unchanged file never undoes changes made through the admin API, and
// starting twice changes nothing. Records another node created at the same
// moment (a unique-key conflict) are re-read and treated as existing, so
// nodes starting together all succeed. Plugins are left to the plugin
// package.
func Seed(ctx context.Context, d Deps, s config.Seed) error {
	steps := []struct {
		what string
		run  func(context.Context, Deps, config.Seed) error
	}{{"groups", seedGroups}, {"users", seedUsers}, {"tokens", seedTokens}, {"channels", seedChannels}, {"models", seedPrices}}
	var err error
	if d.marks, err = d.loadMarkState(ctx, d.FreshDatabase); err != nil {
		return fmt.Errorf("seed: read marks: %w", err)
	}
	for _, st := range steps {
		if err := st.run(ctx, d, s); err != nil {
			return fmt.Errorf("seed %s: %w", st.what, err)
		}
	}
	if d.SeedMarks != nil {
		if err := d.SeedMarks.PutSetting(ctx, seedFormatMark, seedFormat); err != nil {
			return fmt.Errorf("seed: record marks: %w", err)
		}
	}
	// Top-ups are queued; the database must hold them before anything
	// reads balances or the ledger from it.
	if err := d.Billing.Writer().Flush(ctx); err != nil {
		return fmt.Errorf("seed: flush billing: %w", err)
	}
	if d.Keys != nil {
		d.Keys.Invalidate()
	}
	if d.Reload != nil {
		return d.Reload(ctx)
	}
	return d.Billing.Reload(ctx, d.Store)
}

func seedGroups(ctx context.Context, d Deps, s config.Seed) error {
	for _, name := range slices.Sorted(maps.Keys(s.Groups)) {
		if s.Groups[name] < 0 {
			return fmt.Errorf("group %s: ratio must not be negative", name)
		}
		entry := struct {
			Ratio      float64
			Limits     config.SeedRate
			LogContent map[string]any
		}{s.Groups[name], s.GroupLimits[name], s.GroupContent[name]}
		err := d.seedOnce(ctx, "group", name, entry, false, func() error {
			if err := d.Store.Groups().Upsert(ctx, store.Group{Name: name, Ratio: s.Groups[name]}); err != nil {
				return err
			}
			if err := seedGroupLogContent(ctx, d, name, s.GroupContent[name]); err != nil {
				return err
			}
			return seedLimits(ctx, d, store.SubjectGroup, name, groupLimits(s.GroupLimits[name]), true)
		})
		if err != nil {
			return fmt.Errorf("group %s: %w", name, err)
		}
	}
	return nil
}

func seedUsers(ctx context.Context, d Deps, s config.Seed) error {
	for _, su := range s.Users {
		// The entry holds a password: its mark is kept as a bcrypt hash.
		err := d.seedOnce(ctx, "user", su.Username, su, true, func() error { return seedUser(ctx, d, su) })
		if err != nil {
			return fmt.Errorf("user %s: %w", su.Username, err)
		}
	}
	return nil
}

// seedUser creates the user with its starting quota as a recorded top-up,
// or brings role, group and password of an existing one in line. An
// existing user's quota is never touched again: it has been spent since.
func seedUser(ctx context.Context, d Deps, su config.SeedUser) error {
	role, group := orDefault(su.Role, store.RoleUser), orDefault(su.Group, "default")
	if roleRank(role) == 0 {
		return fmt.Errorf("unknown role %q", role)
	}
	if su.Quota < 0 {
		return errors.New("quota must not be negative")
	}
	u, err := d.Store.Users().GetByUsername(ctx, su.Username)
	if errors.Is(err, store.ErrNotFound) {
		err = createSeedUser(ctx, d, su, role, group)
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
		// Another node created the user a moment ago (and gave its
		// starting quota): bring it in line like an existing one.
		u, err = d.Store.Users().GetByUsername(ctx, su.Username)
	}
	if err != nil {
		return err
	}
	// Only what the file states is enforced: a user listed without a role
	// (root, say) keeps the one it has.
	if su.Role == "" {
		role = u.Role
	}
	if su.Group == "" {
		group = u.Group
	}
	if err := seedLimits(ctx, d, store.SubjectUser, strconv.FormatInt(u.ID, 10), userLimits(su), false); err != nil {
		return err
	}
	changed := u.Role != role || u.Group != group
	u.Role, u.Group = role, group
	if su.Password != "" && !auth.CheckPassword(u.PasswordHash, su.Password) {
		if err := d.usersService().SetSeededPassword(u, su.Password); err != nil {
			return err
		}
		changed = true
	}
	if !changed {
		return nil
	}
	return d.Store.Users().Update(ctx, u)
}

func createSeedUser(ctx context.Context, d Deps, su config.SeedUser, role, group string) error {
	if su.Password == "" {
		return errors.New("a new user needs a password")
	}
	u, err := d.usersService().Create(ctx, users.Account{Username: su.Username, Password: su.Password, Role: role, Group: group,
		Seeded: true, Quota: su.Quota, QuotaNote: "initial quota from the seed file"})
	if err != nil {
		return err
	}
	return seedLimits(ctx, d, store.SubjectUser, strconv.FormatInt(u.ID, 10), userLimits(su), false)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// seedTokens creates keys that do not exist yet and, when a key's entry
// changed, brings the settings the entry states (models, expiry, limits) in
// line. A key's secret and quota are set only when it is created: its quota
// has been spent since, and every movement of it is a ledger entry.
func seedTokens(ctx context.Context, d Deps, s config.Seed) error {
	for _, st := range s.Tokens {
		err := d.seedOnce(ctx, "token", st.User+"/"+st.Name, st, false, func() error { return seedToken(ctx, d, st) })
		if err != nil {
			return fmt.Errorf("token %s of %s: %w", st.Name, st.User, err)
		}
	}
	return nil
}

func seedToken(ctx context.Context, d Deps, st config.SeedToken) error {
	u, err := d.Store.Users().GetByUsername(ctx, st.User)
	if err != nil {
		return fmt.Errorf("user %s: %w", st.User, err)
	}
	hash := auth.HashKey(st.Key)
	if t, err := d.Store.Tokens().GetByName(ctx, u.ID, st.Name); err == nil {
		return updateSeedToken(ctx, d, st, t)
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if _, err := d.Store.Tokens().GetByHash(ctx, hash); err == nil {
		return nil // the secret already belongs to another key
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	quota := int64(-1)
	if st.Quota != nil {
		quota = *st.Quota
	}
	if quota < -1 {
		return errors.New("quota must be -1 (unlimited) or non-negative")
	}
	models := st.Models
	if models == nil {
		models = []string{}
	}
	cache, err := seedResponseCache(st.ResponseCache)
	if err != nil {
		return err
	}
	lc, err := seedLogContent(st.LogContent)
	if err != nil {
		return err
	}
	t := &store.Token{UserID: u.ID, Name: st.Name, KeyHash: hash, KeyMasked: auth.MaskKey(st.Key), Quota: quota,
		Models: models, ExpiresAt: st.ExpiresAt, Status: store.StatusEnabled, ResponseCache: cache, LogContent: lc}
	if err := d.Store.Tokens().Create(ctx, t); err != nil {
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
		// Created by another node starting at the same moment.
		if t, err = d.Store.Tokens().GetByName(ctx, u.ID, st.Name); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return nil // the secret belongs to another key
			}
			return err
		}
		return updateSeedToken(ctx, d, st, t)
	}
	return seedLimits(ctx, d, store.SubjectToken, strconv.FormatInt(t.ID, 10), tokenLimits(st), false)
}

// updateSeedToken applies a changed entry to an existing key: the models
// and expiry it states, and its limits.
func updateSeedToken(ctx context.Context, d Deps, st config.SeedToken, t *store.Token) error {
	changed := false
	if st.Models != nil && !slices.Equal(st.Models, t.Models) {
		t.Models, changed = st.Models, true
	}
	if st.ExpiresAt != nil && (t.ExpiresAt == nil || !t.ExpiresAt.Equal(*st.ExpiresAt)) {
		t.ExpiresAt, changed = st.ExpiresAt, true
	}
	if st.ResponseCache != nil {
		cache, err := seedResponseCache(st.ResponseCache)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(cache, t.ResponseCache) {
			t.ResponseCache, changed = cache, true
		}
	}
	if st.LogContent != nil {
		lc, err := seedLogContent(st.LogContent)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(lc, t.LogContent) {
			t.LogContent, changed = lc, true
		}
	}
	if changed {
		if err := d.Store.Tokens().Update(ctx, t); err != nil {
			return err
		}
	}
	return seedLimits(ctx, d, store.SubjectToken, strconv.FormatInt(t.ID, 10), tokenLimits(st), false)
}

func seedChannels(ctx context.Context, d Deps, s config.Seed) error {
	for _, sc := range s.Channels {
		err := d.seedOnce(ctx, "channel", sc.Name, sc, false, func() error { return seedChannel(ctx, d, sc) })
		if err != nil {
			return fmt.Errorf("channel %s: %w", sc.Name, err)
		}
	}
	return nil
}

// seedChannel writes the channel only when it differs from the stored one,
// so an unchanged file does not even bump updated_at.
func seedChannel(ctx context.Context, d Deps, sc config.SeedChannel) error {
	want, err := channelFromSeed(sc)
	if err != nil {
		return err
	}
	d.fillPluginBaseURL(want)
	if err := d.checkProvider(want); err != nil {
		return err
	}
	have, err := d.Store.Channels().GetByName(ctx, sc.Name)
	if errors.Is(err, store.ErrNotFound) {
		if err = d.Store.Channels().Create(ctx, want); !errors.Is(err, store.ErrConflict) {
			return err
		}
		// Created by another node starting at the same moment.
		have, err = d.Store.Channels().GetByName(ctx, sc.Name)
	}
	if err != nil {
		return err
	}
	want.ID, want.CreatedAt, want.UpdatedAt = have.ID, have.CreatedAt, have.UpdatedAt
	if sameChannel(have, want) {
		return nil
	}
	return d.Store.Channels().Update(ctx, want)
}

// channelFromSeed validates a seed channel with the same rules as the API.
func channelFromSeed(sc config.SeedChannel) (*store.Channel, error) {
	typeJSON, err := json.Marshal(sc.Type)
	if err != nil {
		return nil, fmt.Errorf("type: %w", err)
	}
	t, err := parseChannelType(typeJSON)
	if err != nil {
		return nil, err
	}
	c := &store.Channel{Name: sc.Name, Type: t, BaseURL: sc.BaseURL, Key: sc.Key, Models: sc.Models, Groups: sc.Groups,
		Priority: sc.Priority, Weight: 1, ModelMapping: sc.ModelMapping, Settings: sc.Settings,
		Status: orDefault(sc.Status, store.StatusEnabled)}
	if sc.Weight != nil {
		c.Weight = *sc.Weight
	}
	if c.Models == nil {
		c.Models = []string{}
	}
	if c.Groups == nil {
		c.Groups = []string{"default"}
	}
	if c.ModelMapping == nil {
		c.ModelMapping = map[string]string{}
	}
	if c.Settings == nil {
		c.Settings = map[string]any{}
	}
	if sc.Cost != nil {
		raw, err := json.Marshal(sc.Cost)
		if err != nil {
			return nil, fmt.Errorf("cost: %w", err)
		}
		if err := getCost(fields{"cost": raw}, c); err != nil {
			return nil, err
		}
	}
	if err := checkChannel(c); err != nil {
		return nil, err
	}
	return c, nil
}

// sameChannel compares through JSON so that settings decoded from YAML
// (ints) and from the database (float64) compare by value.
func sameChannel(a, b *store.Channel) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return false
	}
	var va, vb any
	if json.Unmarshal(ja, &va) != nil || json.Unmarshal(jb, &vb) != nil {
		return false
	}
	return a.Key == b.Key && reflect.DeepEqual(va, vb)
}

func seedPrices(ctx context.Context, d Deps, s config.Seed) error {
	names := make([]string, 0, len(s.Models))
	for name := range s.Models {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p, err := priceFromSeed(name, s.Models[name])
		if err != nil {
			return fmt.Errorf("model %s: %w", name, err)
		}
		err = d.seedOnce(ctx, "model", name, s.Models[name], false, func() error {
			if have, err := d.Store.Prices().Get(ctx, name); err == nil && samePrice(have, &p) {
				return nil
			}
			p.Source, p.Actor = store.PriceSourceSeed, "seed"
			return d.Store.Prices().Upsert(ctx, p)
		})
		if err != nil {
			return fmt.Errorf("model %s: %w", name, err)
		}
	}
	return nil
}
