package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func loadSeed(t *testing.T) config.Seed {
	t.Helper()
	cfg, err := config.Load(filepath.Join("testdata", "seed.yaml"), func(string) string { return "" })
	if err != nil {
		t.Fatalf("load seed file: %v", err)
	}
	return cfg.Seed
}

// snapshot captures everything seeding may touch, for comparing two starts.
type snapshot struct {
	users    []store.User
	tokens   []store.Token
	channels []store.Channel
	prices   []store.ModelPrice
	groups   []store.Group
	ledger   int
}

func takeSnapshot(t *testing.T, e *env) snapshot {
	t.Helper()
	ctx := context.Background()
	all := store.Page{Page: 1, PageSize: 1000}
	var s snapshot
	var err error
	errs := make([]error, 6)
	s.users, _, errs[0] = e.d.Store.Users().List(ctx, all)
	s.tokens, _, errs[1] = e.d.Store.Tokens().List(ctx, 0, all)
	s.channels, _, errs[2] = e.d.Store.Channels().List(ctx, all)
	s.prices, errs[3] = e.d.Store.Prices().List(ctx)
	s.groups, errs[4] = e.d.Store.Groups().List(ctx)
	_, s.ledger, errs[5] = e.d.Store.Ledger().List(ctx, 0, all)
	if err = firstErr(errs...); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSeedCreatesEverythingFromTheFile(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := Seed(ctx, e.d, loadSeed(t)); err != nil {
		t.Fatalf("Seed: %v", err)
	}
	carol, err := e.d.Store.Users().GetByUsername(ctx, "carol")
	if err != nil || carol.Group != "vip" || carol.Role != store.RoleUser || !auth.CheckPassword(carol.PasswordHash, "carol-pass") {
		t.Fatalf("carol = %+v, %v", carol, err)
	}
	// The starting quota is a ledger top-up, so initial − current = Σ charges holds.
	delta, _, _ := e.d.Store.Ledger().Sum(ctx, carol.ID)
	if carol.Quota != 5000000 || delta != 5000000 {
		t.Fatalf("carol quota %d, ledger %d", carol.Quota, delta)
	}
	p, err := e.d.Keys.Authenticate(ctx, "sk-carol-test")
	if err != nil || p.UserID != carol.ID || p.TokenName != "carol-key" {
		t.Fatalf("seeded key does not authenticate: %+v %v", p, err)
	}
	limited, _ := e.d.Store.Tokens().GetByName(ctx, carol.ID, "carol-limited")
	if limited.Quota != 1000 || limited.ExpiresAt == nil || len(limited.Models) != 1 {
		t.Fatalf("limited key = %+v", limited)
	}
	ch, err := e.d.Store.Channels().GetByName(ctx, "openai-main")
	if err != nil || ch.Type != 1 || ch.BaseURL != "http://127.0.0.1:9101" || ch.Key != "upstream-key" || ch.Priority != 10 ||
		ch.ModelMapping["gpt-4o-mini"] != "gpt-4o-mini-2024-07-18" {
		t.Fatalf("channel = %+v, %v", ch, err)
	}
	video, _ := e.d.Store.Channels().GetByName(ctx, "video")
	if video.Type != 61 || video.Settings["task_plugin_key"] != "acme" || video.Weight != 1 || video.Groups[0] != "default" {
		t.Fatalf("video channel = %+v", video)
	}
	if _, err := e.d.Billing.Price("local-llama"); err != nil {
		t.Fatalf("billing was not reloaded: %v", err)
	}
	if e.d.Billing.Ratio("vip") != 0.5 {
		t.Fatal("group ratio not loaded")
	}
	long, err := e.d.Store.Prices().Get(ctx, "gemini-long")
	wantTiers := []store.PriceTier{{AboveInputTokens: 200000, InputPerMTok: 2.5, OutputPerMTok: 15},
		{AboveInputTokens: 1000000, InputPerMTok: 5, ReasoningPerMTok: 20}}
	if err != nil || long.ReasoningPerMTok != 12 || !reflect.DeepEqual(long.Tiers, wantTiers) {
		t.Fatalf("tiered price = %+v, %v", long, err)
	}
}

func TestSeedingTwiceChangesNothing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	seed := loadSeed(t)
	if err := Seed(ctx, e.d, seed); err != nil {
		t.Fatal(err)
	}
	// Spend some of carol's quota: a second start must not top it up again.
	carol, _ := e.d.Store.Users().GetByUsername(ctx, "carol")
	e.ids["carol"] = carol.ID
	e.settleCall("carol", 1, "gpt-4o-mini", 1234)
	if err := e.d.Billing.Writer().Flush(ctx); err != nil {
		t.Fatal(err)
	}
	before := takeSnapshot(t, e)
	if err := Seed(ctx, e.d, seed); err != nil {
		t.Fatalf("second Seed: %v", err)
	}
	after := takeSnapshot(t, e)
	if !sameJSON(before, after) {
		t.Fatalf("second seeding changed the database:\nbefore %+v\nafter  %+v", before, after)
	}
	if bal, _ := e.d.Billing.Balances().User(ctx, carol.ID); bal != 5000000-1234 {
		t.Fatalf("carol's live balance %d after restart", bal)
	}
}

func sameJSON(a, b snapshot) bool { return dump(a) == dump(b) }

func dump(s snapshot) string {
	var b strings.Builder
	for _, v := range []any{s.users, s.tokens, s.channels, s.prices, s.groups, s.ledger} {
		b.WriteString(strings.ReplaceAll(strings.TrimSpace(fmtAny(v)), "\n", " "))
		b.WriteString("|")
	}
	// %+v shows a channel's cost as its address; its JSON is its value.
	for _, c := range s.channels {
		cost, _ := json.Marshal(c.Cost)
		b.Write(cost)
	}
	return b.String()
}

func TestSeedUpdatesChangedRecordsByNaturalKey(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	seed := loadSeed(t)
	if err := Seed(ctx, e.d, seed); err != nil {
		t.Fatal(err)
	}
	first, _ := e.d.Store.Channels().GetByName(ctx, "openai-main")
	seed.Channels[0].Priority = 99
	seed.Users[0].Quota = 1 // ignored for an existing user
	seed.Users[0].Group = "default"
	seed.Models["gpt-4o-mini"] = config.SeedPrice{InputPerMTok: 0.2}
	if err := Seed(ctx, e.d, seed); err != nil {
		t.Fatal(err)
	}
	ch, _ := e.d.Store.Channels().GetByName(ctx, "openai-main")
	carol, _ := e.d.Store.Users().GetByUsername(ctx, "carol")
	price, _ := e.d.Store.Prices().Get(ctx, "gpt-4o-mini")
	if ch.ID != first.ID || ch.Priority != 99 || carol.Group != "default" || carol.Quota != 5000000 || price.InputPerMTok != 0.2 || price.OutputPerMTok != 0 {
		t.Fatalf("after update: channel %+v, carol %+v, price %+v", ch, carol, price)
	}
}

func TestSeedRejectsBadRecords(t *testing.T) {
	cases := []struct {
		name string
		seed config.Seed
		want string
	}{
		{"unknown channel type", config.Seed{Channels: []config.SeedChannel{{Name: "c", Type: "openia"}}}, "type"},
		{"negative weight", config.Seed{Channels: []config.SeedChannel{{Name: "c", Type: 1, Weight: ptr(-1)}}}, "weight"},
		{"token of a missing user", config.Seed{Tokens: []config.SeedToken{{Name: "t", User: "nobody", Key: "sk-x-12345"}}}, "nobody"},
		{"unknown role", config.Seed{Users: []config.SeedUser{{Username: "u", Password: "p", Role: "boss"}}}, "role"},
		{"negative price", config.Seed{Models: map[string]config.SeedPrice{"m": {PerCall: -1}}}, "per_call"},
		{"negative reasoning price", config.Seed{Models: map[string]config.SeedPrice{"m": {ReasoningPerMTok: -1}}}, "reasoning_per_mtok must be a non-negative"},
		{"repeated tier threshold", config.Seed{Models: map[string]config.SeedPrice{"m": {InputPerMTok: 1, Tiers: []config.SeedPriceTier{
			{AboveInputTokens: 10, InputPerMTok: 2}, {AboveInputTokens: 10, InputPerMTok: 3}}}}}, "model m: tiers[1].above_input_tokens repeats the threshold of tiers[0]"},
		{"tier without threshold", config.Seed{Models: map[string]config.SeedPrice{"m": {Tiers: []config.SeedPriceTier{{InputPerMTok: 2}}}}},
			"tiers[0].above_input_tokens must be a positive integer"},
		{"negative tier price", config.Seed{Models: map[string]config.SeedPrice{"m": {Tiers: []config.SeedPriceTier{{AboveInputTokens: 5, OutputPerMTok: -1}}}}},
			"tiers[0].output_per_mtok must be a non-negative"},
		{"new user without password", config.Seed{Users: []config.SeedUser{{Username: "u"}}}, "password"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			err := Seed(context.Background(), e.d, c.seed)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, c.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestEnsureRootCreatesOnceAndGeneratesAPassword(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if created, _, err := EnsureRoot(ctx, e.d, "other"); err != nil || created {
		t.Fatalf("existing root recreated: %v %v", created, err)
	}
	root, _ := e.d.Store.Users().GetByUsername(ctx, "root")
	if !auth.CheckPassword(root.PasswordHash, "root-pass") {
		t.Fatal("existing root password was replaced")
	}
	if err := e.d.Store.Users().Delete(ctx, root.ID); err != nil {
		t.Fatal(err)
	}
	created, generated, err := EnsureRoot(ctx, e.d, "")
	if err != nil || !created || len(generated) != generatedPasswordLen {
		t.Fatalf("EnsureRoot = %v %q %v", created, generated, err)
	}
	root, _ = e.d.Store.Users().GetByUsername(ctx, "root")
	if root.Role != store.RoleRoot || !auth.CheckPassword(root.PasswordHash, generated) {
		t.Fatalf("root = %+v", root)
	}
}

func fmtAny(v any) string {
	if chs, ok := v.([]store.Channel); ok {
		v = channelsWithoutCost(chs)
	}
	return fmt.Sprintf("%+v", v)
}

func channelsWithoutCost(chs []store.Channel) []store.Channel {
	out := slices.Clone(chs)
	for i := range out {
		out[i].Cost = nil
	}
	return out
}

func TestSeedKeepsRolesTheFileDoesNotState(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	seed := config.Seed{Users: []config.SeedUser{{Username: "root", Password: "root-pass"}, {Username: "admin", Group: "vip"}}}
	if err := Seed(ctx, e.d, seed); err != nil {
		t.Fatal(err)
	}
	root, _ := e.d.Store.Users().GetByUsername(ctx, "root")
	admin, _ := e.d.Store.Users().GetByUsername(ctx, "admin")
	if root.Role != store.RoleRoot || admin.Role != store.RoleAdmin || admin.Group != "vip" {
		t.Fatalf("root %+v, admin %+v", root, admin)
	}
}

// A restart with an unchanged file keeps what the admin API changed; an
// entry changed in the file is applied once.
func TestSeedKeepsAPIChangesUntilTheEntryChanges(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	seed := loadSeed(t)
	if err := Seed(ctx, e.d, seed); err != nil {
		t.Fatal(err)
	}
	ch, _ := e.d.Store.Channels().GetByName(ctx, "openai-main")
	ch.Priority, ch.Status = 3, store.StatusDisabled
	if err := e.d.Store.Channels().Update(ctx, ch); err != nil {
		t.Fatal(err)
	}
	carol, _ := e.d.Store.Users().GetByUsername(ctx, "carol")
	carol.Group = "default"
	if carol.PasswordHash, _ = auth.HashPassword("changed-by-api"); e.d.Store.Users().Update(ctx, carol) != nil {
		t.Fatal("update carol")
	}
	if err := e.d.Store.Prices().Upsert(ctx, store.ModelPrice{Name: "gpt-4o-mini", InputPerMTok: 9}); err != nil {
		t.Fatal(err)
	}
	if err := Seed(ctx, e.d, seed); err != nil {
		t.Fatal(err)
	}
	ch, _ = e.d.Store.Channels().GetByName(ctx, "openai-main")
	carol, _ = e.d.Store.Users().GetByUsername(ctx, "carol")
	price, _ := e.d.Store.Prices().Get(ctx, "gpt-4o-mini")
	if ch.Priority != 3 || ch.Status != store.StatusDisabled || carol.Group != "default" ||
		!auth.CheckPassword(carol.PasswordHash, "changed-by-api") || price.InputPerMTok != 9 {
		t.Fatalf("an unchanged file undid API changes: channel %+v, carol %+v, price %+v", ch, carol, price)
	}
	seed.Channels[0].Priority = 42
	if err := Seed(ctx, e.d, seed); err != nil {
		t.Fatal(err)
	}
	ch, _ = e.d.Store.Channels().GetByName(ctx, "openai-main")
	carol, _ = e.d.Store.Users().GetByUsername(ctx, "carol")
	if ch.Priority != 42 || carol.Group != "default" {
		t.Fatalf("changed channel entry not applied, or unchanged user entry applied: %+v %+v", ch, carol)
	}
}

// Nodes seeding the same file at once all succeed, and the starting quota
// is given once.
func TestConcurrentSeedsAllSucceed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	seed := loadSeed(t)
	d := e.d
	d.SeedMarks = nil // every run applies every entry: the widest race
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- Seed(ctx, d, seed) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent Seed: %v", err)
		}
	}
	carol, _ := e.d.Store.Users().GetByUsername(ctx, "carol")
	if delta, _, _ := e.d.Store.Ledger().Sum(ctx, carol.ID); carol.Quota != 5000000 || delta != 5000000 {
		t.Fatalf("carol quota %d, ledger %d after concurrent seeds", carol.Quota, delta)
	}
}

// TestSeededTieredPriceComparesEqualToTheStoredOne keeps a restart with the
// same file from rewriting a tiered price when the seed marks are gone:
// the file's entry and the stored row must compare equal.
func TestSeededTieredPriceComparesEqualToTheStoredOne(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	seed := loadSeed(t)
	if err := Seed(ctx, e.d, seed); err != nil {
		t.Fatal(err)
	}
	stored, err := e.d.Store.Prices().Get(ctx, "gemini-long")
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := priceFromSeed("gemini-long", seed.Models["gemini-long"])
	if err != nil {
		t.Fatal(err)
	}
	if !samePrice(stored, &fromFile) {
		t.Fatalf("stored %+v\nfile   %+v", *stored, fromFile)
	}
	fromFile.Tiers[1].InputPerMTok = 6
	if samePrice(stored, &fromFile) {
		t.Fatal("a changed tier compares equal")
	}
}

func TestSeededChannelCostIsStoredAndComparesEqual(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	seed := loadSeed(t)
	if err := Seed(ctx, e.d, seed); err != nil {
		t.Fatal(err)
	}
	stored, err := e.d.Store.Channels().GetByName(ctx, "openai-main")
	if err != nil {
		t.Fatal(err)
	}
	if c := stored.Cost; c == nil || c.Discount == nil || *c.Discount != 0.8 || c.Prices["text-embedding-3-small"].InputPerMTok != 0.01 {
		t.Fatalf("stored cost = %+v", stored.Cost)
	}
	fromFile, err := channelFromSeed(seed.Channels[0])
	if err != nil {
		t.Fatal(err)
	}
	fromFile.ID, fromFile.CreatedAt, fromFile.UpdatedAt = stored.ID, stored.CreatedAt, stored.UpdatedAt
	if !sameChannel(stored, fromFile) {
		t.Fatal("the seeded channel with a cost compares unequal to the stored one, so every start would rewrite it")
	}
}
