package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

// generatedPasswordChars is the length of a password the commands make up.
const generatedPasswordChars = 24

// userCommand runs "user create" and "user reset-password", the ways in
// when no one can sign in to the console (a lost root password included).
func userCommand(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 || (args[0] != "create" && args[0] != "reset-password") {
		fmt.Fprint(stderr, "usage: turnpike user create --username U --role R [--password-stdin]\n"+
			"       turnpike user reset-password U [--password-stdin]\n")
		return 2
	}
	sub, rest := args[0], args[1:]
	fs, cfgPath := configFlags("user "+sub, stderr)
	fromStdin := fs.Bool("password-stdin", false, "read the password from the first line of standard input")
	username := fs.String("username", "", "the new user's name (create)")
	role := fs.String("role", "", "user, admin or root (create; required)")
	// The flag package stops at the first name, so "reset-password U
	// --password-stdin" takes U off the front first.
	var named []string
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		named, rest = rest[:1], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return 2
	}
	named = append(named, fs.Args()...)
	if sub == "reset-password" {
		if len(named) != 1 {
			fmt.Fprint(stderr, "usage: turnpike user reset-password U [--password-stdin]\n")
			return 2
		}
		*username = named[0]
	} else if len(named) != 0 || *username == "" {
		fmt.Fprint(stderr, "usage: turnpike user create --username U --role R [--password-stdin]\n")
		return 2
	} else if *role == "" {
		// A role given by mistake to nobody is worse than a question:
		// an operator meaning admin must not get a plain user silently.
		fmt.Fprint(stderr, "turnpike: user create needs --role (user, admin or root)\n")
		return 2
	}
	password, generated, err := choosePassword(*fromStdin, stdin)
	if err != nil {
		fmt.Fprintln(stderr, "turnpike:", err)
		return 1
	}
	ctx := context.Background()
	_, st, ok := commandStore(ctx, *cfgPath, getenv, stderr)
	if !ok {
		return 1
	}
	defer st.Close()
	if sub == "create" {
		err = createUser(ctx, st, *username, *role, password)
	} else {
		err = resetPassword(ctx, st, *username, password)
	}
	if err != nil {
		fmt.Fprintln(stderr, "turnpike:", err)
		return 1
	}
	if generated {
		fmt.Fprintf(stdout, "user %s: password %s (shown once)\n", *username, password)
	} else {
		fmt.Fprintf(stdout, "user %s: password set\n", *username)
	}
	return 0
}

// choosePassword reads one line from stdin, or makes one up.
func choosePassword(fromStdin bool, stdin io.Reader) (pw string, generated bool, err error) {
	if !fromStdin {
		return auth.NewKey()[3 : 3+generatedPasswordChars], true, nil
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", false, fmt.Errorf("read password: %w", err)
	}
	pw = strings.TrimRight(line, "\r\n")
	switch {
	case len(pw) < auth.MinPasswordLen || len(pw) > 72:
		return "", false, fmt.Errorf("the password must be %d to 72 bytes; it is %d", auth.MinPasswordLen, len(pw))
	case pw == auth.DemoPassword:
		return "", false, errors.New("the demo's published password is refused outside the demo")
	}
	return pw, false, nil
}

func createUser(ctx context.Context, st store.Store, username, role, password string) error {
	switch role {
	case store.RoleUser, store.RoleAdmin, store.RoleRoot:
	default:
		return fmt.Errorf("role %q: want user, admin or root", role)
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		return err
	}
	u := &store.User{Username: username, PasswordHash: hash, Role: role, Group: "default", Status: store.StatusEnabled}
	if err := st.Users().Create(ctx, u); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("user %q already exists", username)
		}
		return err
	}
	return nil
}

// resetPassword sets a new password and ends every console session of the
// user, so whoever held the old one is signed out too.
func resetPassword(ctx context.Context, st store.Store, username, password string) error {
	u, err := st.Users().GetByUsername(ctx, username)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no user named %q", username)
	}
	if err != nil {
		return err
	}
	if u.PasswordHash, err = auth.HashPassword(password); err != nil {
		return err
	}
	if err := st.Users().Update(ctx, u); err != nil {
		return err
	}
	return st.Sessions().DeleteUser(ctx, u.ID, "")
}

// commandStore loads the configuration and opens its database for a
// command that works on the records; what goes wrong is told to stderr
// and ok is false.
func commandStore(ctx context.Context, cfgPath string, getenv func(string) string, stderr io.Writer) (cfg config.Config, st *sqlstore.Store, ok bool) {
	cfg, err := config.Load(cfgPath, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "turnpike:", err)
		return cfg, nil, false
	}
	st, err = sqlstore.OpenStore(ctx, cfg.Database)
	if err != nil {
		fmt.Fprintln(stderr, "turnpike:", err)
		return cfg, nil, false
	}
	return cfg, st, true
}
