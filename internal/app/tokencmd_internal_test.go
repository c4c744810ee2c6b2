package app

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

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
		{"not a number", []string{"token", "rotate", "abc"}, 2, "want the key's number"},
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
