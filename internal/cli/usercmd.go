package cli

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
	"github.com/turnpike-gw/turnpike/internal/users"
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
	if !userArgs(sub, append(named, fs.Args()...), username, *role, stderr) {
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
	svc := &users.Service{Users: st.Users()}
	if sub == "create" {
		err = createUser(ctx, svc, *username, *role, password)
	} else {
		err = resetPassword(ctx, svc, st, *username, password)
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

// userArgs checks the names and flags of a user command, taking the
// username of reset-password from its argument; it says what is wrong.
func userArgs(sub string, named []string, username *string, role string, stderr io.Writer) bool {
	switch {
	case sub == "reset-password" && len(named) != 1:
		fmt.Fprint(stderr, "usage: turnpike user reset-password U [--password-stdin]\n")
		return false
	case sub == "reset-password":
		*username = named[0]
	case len(named) != 0 || *username == "":
		fmt.Fprint(stderr, "usage: turnpike user create --username U --role R [--password-stdin]\n")
		return false
	case role == "":
		// The role is never guessed: someone at the command line is often
		// making the administrator the console lacks.
		fmt.Fprint(stderr, "turnpike: user create needs --role (user, admin or root)\n")
		return false
	}
	return true
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
	return strings.TrimRight(line, "\r\n"), false, nil
}

// createUser makes the user through the one users service, under the
// rules every door applies.
func createUser(ctx context.Context, svc *users.Service, username, role, password string) error {
	_, err := svc.Create(ctx, users.Account{Username: username, Password: password, Role: role})
	if errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("user %q already exists", username)
	}
	return err
}

// resetPassword sets a new password and ends every console session of the
// user, so whoever held the old one is signed out too.
func resetPassword(ctx context.Context, svc *users.Service, st store.Store, username, password string) error {
	u, err := st.Users().GetByUsername(ctx, username)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no user named %q", username)
	}
	if err != nil {
		return err
	}
	if err := svc.SetPassword(u, "password", password); err != nil {
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
