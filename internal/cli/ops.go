package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/admin"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/kv"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

// checkTimeout bounds each outside service a command waits for, so a
// firewalled address fails the command instead of hanging it.
const checkTimeout = 5 * time.Second

// configFlags parses the --config flag every operating command shares and
// loads the configuration the way serve does.
func configFlags(name string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("turnpike "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs, fs.String("config", "", "YAML configuration file")
}

// configCommand runs "config check": it lists every problem with the
// configuration, the seed, the database and Redis, one a line, and says
// what it found fine. It writes nothing anywhere (no SQLite file).
func configCommand(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 || args[0] != "check" {
		fmt.Fprint(stderr, "usage: turnpike config check [--config FILE]\n")
		return 2
	}
	fs, cfgPath := configFlags("config check", stderr)
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	// The Redis library logs its own connection failures; the check
	// reports them once, as a problem.
	kv.SilenceLibraryLog()
	notes := func(line string) { fmt.Fprintln(stdout, line) }
	problems := checkConfig(context.Background(), *cfgPath, getenv, notes)
	for _, p := range problems {
		fmt.Fprintln(stdout, "problem:", p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(stdout, "%d problem(s) found\n", len(problems))
		return 1
	}
	fmt.Fprintln(stdout, "no problems found")
	return 0
}

func checkConfig(ctx context.Context, path string, getenv func(string) string, notes func(string)) []string {
	cfg, err := config.Load(path, getenv)
	var problems []string
	var listed config.Problems
	switch {
	case errors.As(err, &listed):
		// Settings are all read; the outside services can still be tried.
		problems = append(problems, listed...)
	case err != nil:
		// The file or an environment value could not be read at all.
		return []string{err.Error()}
	}
	problems = append(problems, cfg.Warnings()...)
	dbCtx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	dbProblems := checkSchema(dbCtx, cfg.Database, notes)
	problems = append(problems, dbProblems...)
	if len(dbProblems) == 0 {
		problems = append(problems, checkSeedAgainstDatabase(dbCtx, cfg)...)
	}
	if cfg.Redis == "" {
		notes("redis: not configured (one node; set redis for several)")
		return problems
	}
	if err := checkRedis(ctx, cfg.Redis); err != nil {
		problems = append(problems, err.Error())
	} else {
		notes("redis: answers")
	}
	return problems
}

func checkRedis(ctx context.Context, raw string) error {
	rdb, where, err := kv.Open(raw)
	if err != nil {
		return err
	}
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	return kv.Ping(ctx, rdb, where)
}

// migrateCommand applies the schema migrations and exits; opening the store
// is what migrates it, as in serve.
func migrateCommand(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs, cfgPath := configFlags("migrate", stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := config.Load(*cfgPath, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "turnpike:", err)
		return 1
	}
	st, err := sqlstore.OpenStore(context.Background(), cfg.Database)
	if err != nil {
		fmt.Fprintln(stderr, "turnpike: migrate:", err)
		return 1
	}
	defer st.Close()
	applied := st.Applied()
	for _, m := range applied {
		fmt.Fprintf(stdout, "applied migration %d %s\n", m.Version, m.Name)
	}
	version, err := st.SchemaVersion(context.Background())
	if err != nil {
		fmt.Fprintln(stderr, "turnpike: migrate:", err)
		return 1
	}
	if len(applied) == 0 {
		fmt.Fprintf(stdout, "database schema is up to date at version %d\n", version)
	} else {
		fmt.Fprintf(stdout, "database schema is now at version %d (%d migration(s) applied)\n", version, len(applied))
	}
	return 0
}

// checkSchema reads the database's schema version without changing it:
// pending migrations are notes (serve applies them), a database newer than
// this binary is a problem (serve refuses it).
func checkSchema(ctx context.Context, dsn string, notes func(string)) []string {
	st, err := sqlstore.Check(ctx, dsn)
	if err != nil {
		return []string{"database: " + err.Error()}
	}
	if st.Ahead() {
		return []string{"database: " + (&sqlstore.SchemaAheadError{Database: st.Version, Known: st.Known}).Error()}
	}
	switch {
	case !st.Exists:
		notes(fmt.Sprintf("database: the file does not exist yet; the first start creates it at schema version %d", st.Known))
	case len(st.Pending) == 0:
		notes(fmt.Sprintf("database: schema up to date at version %d", st.Version))
	default:
		notes(fmt.Sprintf("database: schema at version %d; %d migration(s) pending (serve or migrate applies them):", st.Version, len(st.Pending)))
		for _, m := range st.Pending {
			notes(fmt.Sprintf("  pending migration %d %s", m.Version, m.Name))
		}
	}
	return nil
}

// healthcheckCommand is for container healthchecks: images carry no curl.
func healthcheckCommand(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs, cfgPath := configFlags("healthcheck", stderr)
	base := fs.String("url", "", "the gateway's base address (default from listen)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *base == "" {
		cfg, err := config.Load(*cfgPath, getenv)
		if err != nil {
			fmt.Fprintln(stderr, "turnpike:", err)
			return 1
		}
		*base = localAddress(cfg.Listen)
	}
	target := strings.TrimRight(*base, "/") + "/healthz"
	client := &http.Client{Timeout: checkTimeout}
	resp, err := client.Get(target)
	if err != nil {
		fmt.Fprintln(stderr, "turnpike: healthcheck:", err)
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "turnpike: healthcheck: %s answered %d\n", target, resp.StatusCode)
		return 1
	}
	fmt.Fprintln(stdout, "ok")
	return 0
}

// localAddress is where this host reaches the listen address; server_address
// is ignored because it names the public side, often behind a proxy.
func localAddress(listen string) string {
	c := config.Config{Listen: listen}
	return c.Address()
}

// checkSeedAgainstDatabase runs the seed through the start's own rules; a
// key's user may be in the file or already in the database (read-only).
func checkSeedAgainstDatabase(ctx context.Context, cfg config.Config) []string {
	var names []string
	for _, t := range cfg.Tokens {
		names = append(names, t.User)
	}
	existing, err := sqlstore.UsernamesExisting(ctx, cfg.Database, names)
	if err != nil {
		return []string{"database: " + err.Error()}
	}
	return admin.CheckSeed(ctx, cfg.Seed, cfg.Lines, func(_ context.Context, name string) (bool, error) {
		return existing[name], nil
	})
}
