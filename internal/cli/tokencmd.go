package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/app"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/kv"
	"github.com/turnpike-gw/turnpike/internal/store"
)

const tokenUsage = "usage: turnpike token rotate ID|NAME [--grace 10m|8d] [--config FILE]\n" +
	"       turnpike token disable ID|NAME [--config FILE]\n" +
	"       turnpike token list [--config FILE]\n"

// tokenCommand runs "token rotate" (a new secret for an API key, printed
// once, with the old one working for the grace, kept on the key's row)
// and "token disable". Either change reaches every running node within
// 2 s: through Redis when it is set, and through the database setting
// every node polls (keywatch.go) in any case.
func tokenCommand(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) >= 1 && args[0] == "list" {
		return tokenListCommand(args[1:], stdout, stderr, getenv)
	}
	if len(args) < 2 || (args[0] != "rotate" && args[0] != "disable") {
		fmt.Fprint(stderr, tokenUsage)
		return 2
	}
	sub, rest := args[0], args[1:]
	var named []string
	if !strings.HasPrefix(rest[0], "-") {
		named, rest = rest[:1], rest[1:]
	}
	fs, cfgPath := configFlags("token "+sub, stderr)
	var gf graceFlag
	grace := &gf.d
	if sub == "rotate" {
		fs.Var(&gf, "grace", "how long the old secret keeps working (e.g. 10m or 8d; at most "+auth.MaxRotationGrace.String()+")")
	}
	if err := fs.Parse(rest); err != nil {
		return 2
	}
	named = append(named, fs.Args()...)
	if len(named) != 1 {
		fmt.Fprint(stderr, tokenUsage)
		return 2
	}
	ctx := context.Background()
	cfg, st, ok := commandStore(ctx, *cfgPath, getenv, stderr)
	if !ok {
		return 1
	}
	defer st.Close()
	id, err := resolveToken(ctx, st, named[0])
	if err != nil {
		fmt.Fprintln(stderr, "turnpike:", err)
		return 1
	}
	var msg string
	if sub == "rotate" {
		msg, err = rotateToken(ctx, st, id, *grace)
	} else {
		msg, err = disableToken(ctx, st, id)
	}
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintf(stderr, "turnpike: no API key with id %d\n", id)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "turnpike: token %s: %v\n", sub, err)
		return 1
	}
	fmt.Fprint(stdout, msg)
	if !tellNodes(ctx, cfg.Redis, st.Traffic(), stderr) {
		return 1
	}
	return 0
}

// rotateToken is "token rotate"'s change and what it prints.
func rotateToken(ctx context.Context, st store.Store, id int64, grace time.Duration) (string, error) {
	key, err := auth.RotateKey(ctx, st, id, grace, time.Now())
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("key %d: new secret %s (shown once)\n", id, key)
	if grace > 0 {
		return msg + fmt.Sprintf("the old secret keeps working until %s\n", time.Now().Add(grace).UTC().Format(time.RFC3339)), nil
	}
	return msg + "the old secret stops working on every running node within 2 seconds\n", nil
}

// disableToken is "token disable"'s change and what it prints.
func disableToken(ctx context.Context, st store.Store, id int64) (string, error) {
	t, err := st.Tokens().Get(ctx, id)
	if err != nil {
		return "", err
	}
	t.Status = store.StatusDisabled
	if err := st.Tokens().Update(ctx, t); err != nil {
		return "", err
	}
	return fmt.Sprintf("key %d: disabled; it stops working on every running node within 2 seconds\n", id), nil
}

// tellNodes makes running nodes drop the changed key from their caches:
// at once through Redis when it is set, and within a second through the
// database setting they all poll. Only the second is needed for the 2 s
// promise, so only its failure is reported as one.
func tellNodes(ctx context.Context, redisURL string, st app.Settings, stderr io.Writer) bool {
	announceChange(ctx, redisURL, "tokens", stderr)
	if err := app.MarkKeysChanged(ctx, st); err != nil {
		fmt.Fprintln(stderr, "turnpike: the change is saved, but running nodes were not told; they may accept the old key for up to 10 s more:", err)
		return false
	}
	return true
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
		fmt.Fprintln(stderr, "turnpike: running nodes not told through Redis (they see it within 2 s through the database):", err)
	}
}

func tokenListCommand(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs, cfgPath := configFlags("token list", stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx := context.Background()
	_, st, ok := commandStore(ctx, *cfgPath, getenv, stderr)
	if !ok {
		return 1
	}
	defer st.Close()
	if err := listTokens(ctx, st, stdout); err != nil {
		fmt.Fprintln(stderr, "turnpike: token list:", err)
		return 1
	}
	return 0
}
