package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

func tempDatabase(t *testing.T) (func(string) string, string) {
	t.Helper()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "users.db")
	return envOf(map[string]string{"TURNPIKE_DATABASE": dsn}), dsn
}

func openForTest(t *testing.T, dsn string) *sqlstore.Store {
	t.Helper()
	st, err := sqlstore.OpenStore(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func runUser(env func(string) string, stdin string, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := userCommand(args, strings.NewReader(stdin), &out, &errOut, env)
	return code, out.String(), errOut.String()
}

var shownPassword = regexp.MustCompile(`password (\S+) \(shown once\)`)

func TestUserCreateGeneratesAndPrintsAPasswordThatSignsIn(t *testing.T) {
	env, dsn := tempDatabase(t)
	code, out, errOut := runUser(env, "", "create", "--username", "alice", "--role", "admin")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	m := shownPassword.FindStringSubmatch(out)
	if m == nil || len(m[1]) < auth.MinPasswordLen {
		t.Fatalf("no generated password in %q", out)
	}
	u, err := openForTest(t, dsn).Users().GetByUsername(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if u.Role != store.RoleAdmin || !auth.CheckPassword(u.PasswordHash, m[1]) {
		t.Fatalf("stored role %q, printed password checks %v", u.Role, auth.CheckPassword(u.PasswordHash, m[1]))
	}
}

func TestUserCreateTakesThePasswordFromStdin(t *testing.T) {
	env, dsn := tempDatabase(t)
	code, out, errOut := runUser(env, "correct horse battery\n", "create", "--username", "bob", "--role", "user", "--password-stdin")
	if code != 0 || strings.Contains(out, "correct horse") {
		t.Fatalf("exit %d, printed %q: %s", code, out, errOut)
	}
	u, err := openForTest(t, dsn).Users().GetByUsername(context.Background(), "bob")
	if err != nil || !auth.CheckPassword(u.PasswordHash, "correct horse battery") {
		t.Fatalf("user %+v, %v", u, err)
	}
}

func TestUserCreateRefusesBadInput(t *testing.T) {
	env, _ := tempDatabase(t)
	if code, _, errOut := runUser(env, "", "create", "--username", "carol", "--role", "user"); code != 0 {
		t.Fatalf("first create failed: %s", errOut)
	}
	cases := []struct {
		name  string
		stdin string
		args  []string
		code  int
		says  string
	}{
		{"short password", "short\n", []string{"create", "--username", "dave", "--role", "user", "--password-stdin"}, 1, "8 to 72"},
		{"the demo's password", auth.DemoPassword + "\n", []string{"create", "--username", "dave", "--role", "user", "--password-stdin"}, 1, "demo"},
		{"the username as password", "dave-the-admin\n", []string{"create", "--username", "dave-the-admin", "--role", "admin", "--password-stdin"}, 1, "username"},
		{"unknown role", "", []string{"create", "--username", "dave", "--role", "owner"}, 1, "role"},
		{"no role", "", []string{"create", "--username", "dave"}, 2, "--role"},
		{"existing user", "", []string{"create", "--username", "carol", "--role", "user"}, 1, "already exists"},
		{"no username", "", []string{"create"}, 2, "usage"},
		{"no subcommand", "", nil, 2, "usage"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runUser(env, tc.stdin, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.says) {
				t.Fatalf("exit %d, said %q", code, errOut)
			}
		})
	}
}

func TestUserResetPasswordWorksForRootAndEndsItsSessions(t *testing.T) {
	env, dsn := tempDatabase(t)
	if code, _, errOut := runUser(env, "", "create", "--username", "root", "--role", "root"); code != 0 {
		t.Fatal(errOut)
	}
	st := openForTest(t, dsn)
	ctx := context.Background()
	root, err := st.Users().GetByUsername(ctx, "root")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := st.Sessions().Create(ctx, &store.Session{IDHash: "old-session", UserID: root.ID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runUser(env, "a new root password\n", "reset-password", "root", "--password-stdin")
	if code != 0 || !strings.Contains(out, "password set") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	root, _ = st.Users().GetByUsername(ctx, "root")
	if !auth.CheckPassword(root.PasswordHash, "a new root password") {
		t.Fatal("the new password does not check")
	}
	if _, err := st.Sessions().Get(ctx, "old-session"); err == nil {
		t.Fatal("the session signed in with the old password still lives")
	}
	code, out, _ = runUser(env, "", "reset-password", "root")
	if m := shownPassword.FindStringSubmatch(out); code != 0 || m == nil {
		t.Fatalf("exit %d, no generated password in %q", code, out)
	}
	if code, _, errOut := runUser(env, "", "reset-password", "nobody"); code != 1 || !strings.Contains(errOut, `no user named "nobody"`) {
		t.Fatalf("exit %d, said %q", code, errOut)
	}
}
