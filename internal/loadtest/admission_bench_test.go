package loadtest

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/admission"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/kv"
	"github.com/turnpike-gw/turnpike/internal/plans"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

// The admission benchmarks (here, beside the relay benchmarks, since the
// admission package may not reach Redis itself) are one call's money seam as the relay runs it
// (limit, reserve, settle, release) for a member of a shared-billing team
// of an organisation, with a period budget, a rate limit and a concurrency
// limit at the team and the organisation; "plan" is the same call drawn
// from a plan the user holds. "memory" keeps counters and balances in the
// process (one node), "redis" in the Redis of TURNPIKE_TEST_REDIS (several
// nodes), skipped when it is unset.

func BenchmarkAdmitTeamOrg(b *testing.B) {
	for _, backend := range []string{"memory", "redis"} {
		b.Run(backend, func(b *testing.B) { benchAdmit(b, backend == "redis", false) })
	}
}

func BenchmarkAdmitPlan(b *testing.B) {
	for _, backend := range []string{"memory", "redis"} {
		b.Run(backend, func(b *testing.B) { benchAdmit(b, backend == "redis", true) })
	}
}

func benchAdmit(b *testing.B, withRedis, withPlan bool) {
	ctx := context.Background()
	g, p := admitEnv(b, withRedis, withPlan)
	acct := admission.Account(p)
	row := store.UsageLog{UserID: p.UserID, TokenID: p.TokenID, Model: "m", Type: store.LogConsume, PromptTokens: 20, CompletionTokens: 30}
	b.ReportAllocs()
	for b.Loop() {
		var tk admission.Ticket
		if err := g.Limit(ctx, &tk, p, "m", nil, nil); err != nil {
			b.Fatal(err)
		}
		hold, err := g.Reserve(ctx, ctx, &tk, acct, g.Billing.NewRequestKey("bench"), 100, nil)
		if err != nil {
			b.Fatal(err)
		}
		tk.Settle(ctx, hold, 60, row, 50)
		tk.Release(ctx)
	}
	b.StopTimer()
	if err := g.Billing.Writer().Flush(ctx); err != nil {
		b.Fatal(err)
	}
}

// admitEnv is a gateway's money over a fresh SQLite database: an
// organisation, a shared-billing team in it with a large balance, and a
// member whose key makes the calls; with withPlan the member holds a plan
// covering the model.
func admitEnv(b *testing.B, withRedis, withPlan bool) (admission.Gate, *auth.Principal) {
	ctx := context.Background()
	st, err := sqlstore.OpenStore(ctx, "sqlite:"+filepath.Join(b.TempDir(), "a.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	var rdb kv.Client
	if withRedis {
		rdb = benchRedis(b)
	}
	org := &store.Org{Name: "acme"}
	must(b, st.Teams().CreateOrg(ctx, org))
	team := &store.Team{OrgID: org.ID, Name: "search", Billing: store.BillingShared, Quota: 1 << 50}
	must(b, st.Teams().CreateTeam(ctx, team))
	u := &store.User{Username: "member", Role: store.RoleUser, Group: "default", Quota: 1 << 50, TeamID: team.ID}
	must(b, st.Users().Create(ctx, u))
	key := &store.Token{UserID: u.ID, Name: "k", KeyHash: "bench-hash", KeyMasked: "sk-…", Quota: -1, Status: "enabled"}
	must(b, st.Tokens().Create(ctx, key))
	limits := ratelimit.New(st.Traffic(), rdb, nil)
	big := ratelimit.Limits{PeriodQuota: 1 << 50, Period: ratelimit.Month, Rate: ratelimit.Rate{RPM: 1 << 40, Concurrency: 1 << 20}}
	must(b, limits.Set(ctx, store.SubjectTeam, strconv.FormatInt(team.ID, 10), big))
	must(b, limits.Set(ctx, store.SubjectOrg, strconv.FormatInt(org.ID, 10), big))
	var balances billing.Balances = billing.NewMemoryBalances(st)
	po := plans.Options{Store: st.Plans()}
	if rdb != nil {
		balances, po.Redis = billing.NewRedisBalances(rdb, st), rdb
	}
	if withPlan {
		plan := &store.Plan{Name: "coder", PriceUSD: 20, Period: "month", Priority: 1,
			Windows: []store.PlanWindow{{Hours: 5, Quota: 1 << 50}}, Models: []string{"m"}}
		must(b, st.Plans().Create(ctx, plan))
		must(b, st.Plans().AddGrant(ctx, &store.PlanGrant{UserID: u.ID, PlanID: plan.ID, Until: time.Now().AddDate(0, 1, 0), Source: store.GrantAdmin}))
	}
	ps := plans.New(po)
	must(b, ps.Reload(ctx))
	w := billing.NewWriter(st, slog.New(slog.DiscardHandler), 100*time.Millisecond, 4096)
	b.Cleanup(func() { _ = w.Close(context.Background()) })
	svc := billing.NewService(balances, w, 500000)
	must(b, svc.TakeLease(ctx, time.Minute))
	return admission.Gate{Billing: svc, Limits: limits, Plans: ps},
		&auth.Principal{UserID: u.ID, TokenID: key.ID, Group: "default", TeamID: team.ID, OrgID: org.ID}
}

func benchRedis(b *testing.B) kv.Client {
	addr := os.Getenv("TURNPIKE_TEST_REDIS")
	if addr == "" {
		b.Skip("set TURNPIKE_TEST_REDIS to run the Redis admission benchmarks")
	}
	rdb, _, err := kv.Open(addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rdb.Close() })
	must(b, rdb.Ping(context.Background()).Err())
	return rdb
}

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}
