package app

import (
	"context"
	"github.com/turnpike-gw/turnpike/internal/archive"
	"log/slog"
	"time"
)

// runner is one background loop of a serving node: a stable name for logs
// and the loop, which returns once its context ends.
type runner struct {
	name string
	run  func(ctx context.Context)
}

// runners lists every background loop of a serving node in the order they
// start; they stop in the reverse order, so a loop that others lean on
// (the billing lease, under every hold a poller or batch settles) outlives
// them. A new loop is a new line here, never a goroutine of its own.
func (a *App) runners() []runner {
	rs := []runner{
		// Stopped last, after the loops and calls that end captures, so
		// what they handed over is written.
		{"content-writer", a.content.Run},
		{"billing-lease", func(ctx context.Context) { a.Billing.RunLeases(ctx, a.Config.LeasePeriod()) }},
		{"plan-sweep", every(a.Log, a.Config.LeasePeriod()/2, "plan sweep failed; retrying on the next tick", a.sweepPlans)},
		{"budget-sweep", every(a.Log, a.Config.LeasePeriod()/2, "budget sweep failed; retrying on the next tick", a.sweepBudgets)},
		{"channel-health", func(ctx context.Context) { a.Router.Health.Run(ctx, healthRefresh) }},
		{"limits-follow", every(a.Log, 5*time.Second, "reloading traffic limits failed", a.Limits.Reload)},
		{"price-follow", func(ctx context.Context) { a.followPrices(ctx, priceFollowEvery) }},
		{"plugin-watch", func(ctx context.Context) { a.plugins.Watch(ctx, 3*time.Second) }},
		{"guardrail-watch", every(a.Log, guardrailRefresh, "guardrails not reloaded", a.guardrails.Reload)},
		{"changes", a.changes.Run},
		{"key-watch", func(ctx context.Context) { watchKeyChanges(ctx, a.sql.Traffic(), keyWatchEvery, a.Keys.Invalidate) }},
		// Two delivery workers, so one slow webhook does not hold back the
		// next alert.
		{"alert-delivery-1", a.Notify.DeliverLoop},
		{"alert-delivery-2", a.Notify.DeliverLoop},
		{"alert-balances", a.Notify.BalanceLoop},
	}
	if a.Config.PriceCatalogue.Enabled() {
		w := &priceWatch{cfg: a.Config.PriceCatalogue, fetch: a.fetchCatalogue, prices: a.Store.Prices(), alert: a.Notify.PriceCatalogueChanged, log: a.Log}
		rs = append(rs, runner{"price-watch", w.run})
	}
	if days := a.Config.Retention(); days > 0 {
		if j, ok := archive.New(a.Config.Logs, days, a.Store.Logs(), a.Log); ok {
			j.Contents = a.content.ArchiveWindow
			rs = append(rs, runner{"log-archive", archiveRunner(j, a.Log)})
		} else {
			a.Log.Warn("usage log retention is set but logs.archive.s3 is not: nothing is deleted without an archive", "retention_days", days)
		}
	}
	rs = append(rs, runner{"rollup-backfill", rollupBackfill(a.Store.Rollups(), a.Log)})
	return append(rs,
		runner{"batches", a.batches.Run},
		runner{"task-poller", a.pollTasks},
		// Snapshots are re-read every 15 s, so that changes made through
		// another node reach this one even when no announcement does.
		runner{"snapshot-refresh", every(a.Log, 15*time.Second, "snapshot refresh failed", a.reload)})
}

func (a *App) pollTasks(ctx context.Context) {
	if err := a.tasks.Poller().Run(ctx); err != nil && ctx.Err() == nil {
		a.Log.Error("task poller stopped", "err", err)
	}
}

// every is a loop that reloads something each interval until ctx ends, so
// a change made on another node is served here within the interval; a
// failed reload is logged and the next tick tries again.
func every(log *slog.Logger, interval time.Duration, failed string, reload func(context.Context) error) func(context.Context) {
	return func(ctx context.Context) {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := reload(ctx); err != nil && ctx.Err() == nil {
					log.Warn(failed, "err", err)
				}
			}
		}
	}
}

// running is the loops started, each with its own context.
type running struct {
	log   *slog.Logger
	loops []startedLoop
	// slow is how long stop waits for a loop before it names it in the log
	// (and goes on waiting: what follows closes the store under it).
	slow time.Duration
}

type startedLoop struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
}

// startRunners starts rs in order.
func startRunners(log *slog.Logger, rs []runner) *running {
	r := &running{log: log, slow: 5 * time.Second}
	for _, l := range rs {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); l.run(ctx) }()
		r.loops = append(r.loops, startedLoop{name: l.name, cancel: cancel, done: done})
	}
	return r
}

// stop ends the loops in the reverse order of their start, each finished
// before the next is told.
func (r *running) stop() {
	for i := len(r.loops) - 1; i >= 0; i-- {
		l := r.loops[i]
		l.cancel()
		select {
		case <-l.done:
			continue
		case <-time.After(r.slow):
			r.log.Warn("background loop has not stopped yet; waiting", "loop", l.name)
		}
		<-l.done
	}
}
