package cli

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/app"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

var shownSecret = regexp.MustCompile(`new secret (sk-\S+) \(shown once\)`)

func TestTokenRotatePrintsANewSecretAndKeepsTheOldOneForTheGrace(t *testing.T) {
	env, dsn := tempDatabase(t)
	st := openForTest(t, dsn)
	ctx := context.Background()
	u := &store.User{Username: "alice", PasswordHash: "h", Role: store.RoleUser, Group: "default", Status: store.StatusEnabled}
	if err := st.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	const old = "sk-alice-before-rotation"
	tok := &store.Token{UserID: u.ID, Name: "k", KeyHash: auth.HashKey(old), KeyMasked: auth.MaskKey(old), Quota: -1, Status: store.StatusEnabled}
	if err := st.Tokens().Create(ctx, tok); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := Main([]string{"token", "rotate", strconv.FormatInt(tok.ID, 10), "--grace", "10m"}, &out, &errOut, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	m := shownSecret.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no new secret in %q", out.String())
	}
	keys := auth.NewKeys(st, time.Minute)
	for _, k := range []string{m[1], old} {
		if p, err := keys.Authenticate(ctx, k); err != nil || p.TokenID != tok.ID {
			t.Errorf("key %s after rotation with grace: %v", auth.MaskKey(k), err)
		}
	}
}

func TestTokenRotateRefusesBadArguments(t *testing.T) {
	env, _ := tempDatabase(t)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no id", []string{"token", "rotate"}, 2, "usage"},
		{"an unknown name", []string{"token", "rotate", "abc"}, 1, `no API key with id or name "abc"`},
		{"a grace that is not a duration", []string{"token", "rotate", "1", "--grace", "soon"}, 2, "8d"},
		{"a grace in days beyond the bound", []string{"token", "rotate", "1", "--grace", "31d"}, 1, "grace must be between"},
		{"a missing key", []string{"token", "rotate", "99"}, 1, "no API key with id 99"},
		{"a grace beyond the bound", []string{"token", "rotate", "1", "--grace", "1000h"}, 1, "grace"},
		{"an unknown subcommand", []string{"token", "revoke", "1"}, 2, "usage"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main(c.args, &out, &errOut, env)
			if code != c.code || !strings.Contains(errOut.String(), c.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errOut.String(), c.code, c.want)
			}
		})
	}
}

// A key rotated without grace or disabled from the command line stops
// working on a running node within 2 s, without Redis: the node caches a
// key for 10 s, and hears of the change through the database (CONTRACT §16).
func TestAKeyChangedFromTheCommandLineStopsOnARunningNodeWithinTwoSeconds(t *testing.T) {
	for _, sub := range [][]string{{"rotate", "--grace", "0s"}, {"disable"}} {
		t.Run(sub[0], func(t *testing.T) {
			env, dsn := tempDatabase(t)
			st := openForTest(t, dsn)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			u := &store.User{Username: "alice", PasswordHash: "h", Role: store.RoleUser, Group: "default", Status: store.StatusEnabled}
			if err := st.Users().Create(ctx, u); err != nil {
				t.Fatal(err)
			}
			const old = "sk-alice-before-the-change"
			tok := &store.Token{UserID: u.ID, Name: "k", KeyHash: auth.HashKey(old), KeyMasked: auth.MaskKey(old), Quota: -1, Status: store.StatusEnabled}
			if err := st.Tokens().Create(ctx, tok); err != nil {
				t.Fatal(err)
			}
			// A running node: its key cache, and its watch of the database.
			node := openForTest(t, dsn)
			keys := auth.NewKeys(node, 10*time.Second)
			if _, err := keys.Authenticate(ctx, old); err != nil {
				t.Fatal(err)
			}
			go app.WatchKeyChanges(ctx, node.Traffic(), keys.Invalidate)
			time.Sleep(50 * time.Millisecond) // the watch has read the setting as it was
			var out, errOut bytes.Buffer
			args := append([]string{"token", sub[0], strconv.FormatInt(tok.ID, 10)}, sub[1:]...)
			if code := Main(args, &out, &errOut, env); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			if !strings.Contains(out.String(), "every running node within 2 seconds") {
				t.Fatalf("the command says %q", out.String())
			}
			changed := time.Now()
			for {
				if _, err := keys.Authenticate(ctx, old); err != nil {
					break
				}
				if time.Since(changed) > 2*time.Second {
					t.Fatal("the running node still accepts the old key 2 s after the change")
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// A key can be named by its name as well as its id, the grace may be given
// in days, and token list shows every key without its secret.
func TestTokenRotateByNameWithAGraceInDaysAndTokenList(t *testing.T) {
	env, dsn := tempDatabase(t)
	st := openForTest(t, dsn)
	ctx := context.Background()
	u := &store.User{Username: "alice", PasswordHash: "h", Role: store.RoleUser, Group: "default", Status: store.StatusEnabled}
	if err := st.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	const old = "sk-alice-named-key-secret"
	tok := &store.Token{UserID: u.ID, Name: "ci-key", KeyHash: auth.HashKey(old), KeyMasked: auth.MaskKey(old), Quota: -1, Status: store.StatusEnabled}
	if err := st.Tokens().Create(ctx, tok); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := Main([]string{"token", "rotate", "ci-key", "--grace", "8d"}, &out, &errOut, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "key "+strconv.FormatInt(tok.ID, 10)+": new secret") {
		t.Fatalf("rotate by name said %q", out.String())
	}
	if until := time.Now().Add(8 * 24 * time.Hour).UTC().Format("2006-01-02"); !strings.Contains(out.String(), until) {
		t.Errorf("the old secret should work 8 days, until %s: %q", until, out.String())
	}
	out.Reset()
	if code := Main([]string{"token", "list"}, &out, &errOut, env); code != 0 {
		t.Fatalf("list exit %d: %s", code, errOut.String())
	}
	m := shownSecret.FindStringSubmatch(out.String())
	if m != nil || !strings.Contains(out.String(), "ci-key") || !strings.Contains(out.String(), "alice") || strings.Contains(out.String(), old) {
		t.Fatalf("token list = %q", out.String())
	}
}

func TestParseGraceTakesDurationsAndDays(t *testing.T) {
	for in, want := range map[string]time.Duration{"10m": 10 * time.Minute, "36h": 36 * time.Hour, "8d": 192 * time.Hour, "0.5d": 12 * time.Hour} {
		if got, err := parseGrace(in); err != nil || got != want {
			t.Errorf("parseGrace(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "d", "-1d", "soon", "-5m"} {
		if _, err := parseGrace(bad); err == nil {
			t.Errorf("parseGrace(%q) accepted", bad)
		}
	}
}
