package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/kv"
	"github.com/turnpike-gw/turnpike/internal/store"
)

const tokenUsage = "usage: turnpike token rotate ID [--grace 10m] [--config FILE]\n"

// tokenCommand runs "token rotate": a new secret for an API key, printed
// once, with the old one working for the grace (on every node: the grace
// is kept on the key's row).
func tokenCommand(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) < 2 || args[0] != "rotate" {
		fmt.Fprint(stderr, tokenUsage)
		return 2
	}
	rest := args[1:]
	var named []string
	if !strings.HasPrefix(rest[0], "-") {
		named, rest = rest[:1], rest[1:]
	}
	fs, cfgPath := configFlags("token rotate", stderr)
	grace := fs.Duration("grace", 0, "how long the old secret keeps working (e.g. 10m; at most "+auth.MaxRotationGrace.String()+")")
	if err := fs.Parse(rest); err != nil {
		return 2
	}
	named = append(named, fs.Args()...)
	if len(named) != 1 {
		fmt.Fprint(stderr, tokenUsage)
		return 2
	}
	id, err := strconv.ParseInt(named[0], 10, 64)
	if err != nil || id <= 0 {
		fmt.Fprintf(stderr, "turnpike: token id %q: want the key's number (see GET /api/tokens)\n", named[0])
		return 2
	}
	ctx := context.Background()
	cfg, st, ok := commandStore(ctx, *cfgPath, getenv, stderr)
	if !ok {
		return 1
	}
	defer st.Close()
	key, err := auth.RotateKey(ctx, st, id, *grace, time.Now())
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintf(stderr, "turnpike: no API key with id %d\n", id)
		return 1
	}
	if err != nil {
		fmt.Fprintln(stderr, "turnpike: token rotate:", err)
		return 1
	}
	announceChange(ctx, cfg.Redis, "tokens", stderr)
	fmt.Fprintf(stdout, "key %d: new secret %s (shown once)\n", id, key)
	if *grace > 0 {
		fmt.Fprintf(stdout, "the old secret keeps working until %s\n", time.Now().Add(*grace).UTC().Format(time.RFC3339))
	} else {
		fmt.Fprintln(stdout, "the old secret no longer works")
	}
	return 0
}

// announceChange tells running nodes that kind changed, so they drop their
// caches at once; without Redis they see it at their next refresh.
func announceChange(ctx context.Context, redisURL, kind string, stderr io.Writer) {
	if redisURL == "" {
		return
	}
	rdb, _, err := kv.Open(redisURL)
	if err != nil {
		fmt.Fprintln(stderr, "turnpike: running nodes not told at once:", err)
		return
	}
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	if err := kv.Announce(ctx, rdb, "cli", kind); err != nil {
		fmt.Fprintln(stderr, "turnpike: running nodes not told at once (they see it within 10 s):", err)
	}
}
