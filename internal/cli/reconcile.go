package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/turnpike-gw/turnpike/internal/archive"
	"github.com/turnpike-gw/turnpike/internal/books"
	"github.com/turnpike-gw/turnpike/internal/kv"
	"github.com/turnpike-gw/turnpike/internal/plans"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// reconcileCommand prints the reconciliation GET /api/reports/reconcile
// answers, read straight from the database (safe while nodes run: it only
// reads), and exits 1 when the books do not agree.
func reconcileCommand(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs, cfgPath := configFlags("reconcile", stderr)
	since := fs.String("since", "", "start of the window: RFC 3339 or Unix seconds (default: 24 hours before until)")
	until := fs.String("until", "", "end of the window: RFC 3339 or Unix seconds (default: now)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	w, err := books.ParseWindow(*since, *until, time.Now())
	if err != nil {
		fmt.Fprintln(stderr, "turnpike: reconcile:", err)
		return 2
	}
	ctx := context.Background()
	cfg, st, ok := commandStore(ctx, *cfgPath, getenv, stderr)
	if !ok {
		return 1
	}
	defer st.Close()
	var src store.Store = st
	if r, ok := archive.NewReader(cfg.Logs); ok {
		src = archive.WithArchive(st, r) // archived days are read from the archive
	}
	rep, err := books.Reconcile(ctx, src, w, time.Now())
	if err == nil {
		err = reconcilePlans(ctx, cfg.Redis, st, rep)
	}
	if err == nil {
		err = reconcileBudgets(ctx, cfg.Redis, st, rep)
	}
	if err != nil {
		fmt.Fprintln(stderr, "turnpike: reconcile:", err)
		return 1
	}
	out, _ := json.MarshalIndent(rep, "", "  ")
	fmt.Fprintf(stdout, "%s\n", out)
	if !rep.OK {
		for _, d := range rep.Differences {
			fmt.Fprintln(stderr, "turnpike: reconcile:", d.Message)
		}
		return 1
	}
	return 0
}

// reconcilePlans adds the plan windows' books, reading the live windows
// where the nodes keep them: in Redis when one is configured.
func reconcilePlans(ctx context.Context, redisURL string, st store.Store, rep *books.Report) error {
	o := plans.Options{Store: st.Plans()}
	if redisURL != "" {
		rdb, _, err := kv.Open(redisURL)
		if err != nil {
			return err
		}
		defer rdb.Close()
		o.Redis = rdb
	}
	return books.ReconcilePlans(ctx, st, plans.New(o), rep)
}

// reconcileBudgets adds the period budgets of teams and organisations,
// reading the live counters where the nodes keep them: in Redis when one
// is configured (on one node without Redis they live in its memory, and
// are read from the database as a restart would load them).
func reconcileBudgets(ctx context.Context, redisURL string, st store.Store, rep *books.Report) error {
	tr, ok := st.(interface{ Traffic() store.TrafficRepo })
	if !ok {
		return nil
	}
	var rdb kv.Client
	if redisURL != "" {
		c, _, err := kv.Open(redisURL)
		if err != nil {
			return err
		}
		defer c.Close()
		rdb = c
	}
	lim := ratelimit.New(tr.Traffic(), rdb, nil)
	if err := lim.Reload(ctx); err != nil {
		return err
	}
	return books.ReconcileBudgets(ctx, st, lim, rep)
}
