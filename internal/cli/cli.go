package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/turnpike-gw/turnpike/internal/app"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/plugin"
)

const usage = `Usage: turnpike [command] [--config FILE]

Commands:
  serve          run the gateway (the default)
  demo           run the gateway with a built-in demo upstream, channel, user and key
  help           list the commands (also --help, -h)
  version        print the version, commit and commit date (also --version)
  config check   validate the configuration and seed, connect to the database and
                 Redis, and list every problem; exit 1 on any
  user create --username U --role R [--password-stdin]
                 create a user; without --password-stdin a password is generated and printed
  user reset-password U [--password-stdin]
                 set a new password (generated when not given) and end the user's sessions
  token rotate ID [--grace 10m]
                 issue a new secret for an API key and print it once; the old one
                 keeps working for the grace
  token disable ID
                 disable an API key; like a rotation, every running node stops
                 accepting it within 2 seconds
  export --out FILE [--with-secrets]
                 write every record as JSON lines (secrets only with the flag)
  import FILE    load an export into an empty database (SQLite to PostgreSQL or MySQL)
  migrate        apply the database schema migrations and exit
  healthcheck [--url URL]
                 exit 0 when URL/healthz answers 200 (default: the listen address)
  plugin check FILE
                 validate a task plugin offline and list every problem
  reconcile [--since T] [--until T]
                 prove the ledger, the usage rows and the balances agree per user and
                 API key over a window (default the last 24 hours); exit 1 when not
`

// Main runs the command line and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && (args[0][0] != '-' || isTopLevelFlag(args[0])) {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "version", "--version", "-version":
		printVersion(stdout, app.Version, readBuildVCS(debug.ReadBuildInfo))
		return 0
	case "config":
		return configCommand(args, stdout, stderr, getenv)
	case "user":
		return userCommand(args, os.Stdin, stdout, stderr, getenv)
	case "token":
		return tokenCommand(args, stdout, stderr, getenv)
	case "export":
		return exportCommand(args, stdout, stderr, getenv)
	case "import":
		return importCommand(args, stdout, stderr, getenv)
	case "migrate":
		return migrateCommand(args, stdout, stderr, getenv)
	case "healthcheck":
		return healthcheckCommand(args, stdout, stderr, getenv)
	case "plugin":
		return pluginCommand(args, stdout, stderr)
	case "reconcile":
		return reconcileCommand(args, stdout, stderr, getenv)
	case "serve", "demo":
		return runServer(cmd == "demo", args, stdout, stderr, getenv)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "turnpike: unknown command %q\n\n%s", cmd, usage)
	return 2
}

// isTopLevelFlag reports the flags that name a command of their own rather
// than an option of serve, so "turnpike --help" is not a flag error.
func isTopLevelFlag(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "-version", "--version":
		return true
	}
	return false
}

func runServer(demo bool, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("turnpike", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "YAML configuration file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := config.Load(*cfgPath, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "turnpike:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	defer exitOnSecondSignal(stderr)()
	var d *demoUpstream
	if demo {
		cfg.Demo = true
		// The demo's records (its published key and password) must not land
		// in the database serve uses, unless the operator named one.
		if cfg.Database == config.Defaults().Database {
			cfg.Database = demoDatabase
		}
		if d, err = startDemo(&cfg); err != nil {
			fmt.Fprintln(stderr, "turnpike:", err)
			return 1
		}
		defer d.Close()
	}
	a, err := app.New(ctx, cfg, stderr)
	if err != nil {
		return startFailed(ctx, stderr, err)
	}
	rootPassword, err := a.Prepare(ctx)
	if err != nil {
		if rootPassword != "" {
			fmt.Fprintf(stdout, "created user root with password %s (shown once)\n", rootPassword)
		}
		_ = a.Shutdown()
		return startFailed(ctx, stderr, err)
	}
	announced := false
	err = a.Serve(ctx, func(addr string) {
		announced = true
		fmt.Fprintf(stdout, "turnpike %s listening on %s (%s)\n", app.Version, a.Config.Address(), a.StartFacts())
		if rootPassword != "" {
			fmt.Fprintf(stdout, "created user root with password %s (shown once)\n", rootPassword)
		}
		if d != nil {
			d.announce(stdout, a.Config.Address())
		}
	})
	if err != nil {
		// Root exists now, so a later start will not create it again: a start
		// that fails here (the port is taken) must still show its password.
		if !announced && rootPassword != "" {
			fmt.Fprintf(stdout, "created user root with password %s (shown once)\n", rootPassword)
		}
		fmt.Fprintln(stderr, "turnpike:", err)
		return 1
	}
	return 0
}

// exitOnSecondSignal ends the process at once on a second SIGTERM or
// SIGINT, for an operator who does not want to wait out the grace: the
// first one starts the graceful shutdown. It returns its own stop.
func exitOnSecondSignal(stderr io.Writer) func() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for seen := 0; ; {
			select {
			case <-done:
				return
			case <-sigs:
				if seen++; seen >= 2 {
					fmt.Fprintln(stderr, "turnpike: second stop signal: exiting at once, without waiting for calls in flight")
					os.Exit(1)
				}
			}
		}
	}()
	return func() { signal.Stop(sigs); close(done) }
}

func pluginCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 || args[0] != "check" {
		fmt.Fprint(stderr, "usage: turnpike plugin check FILE\n")
		return 2
	}
	if !plugin.CheckFile(args[1], stdout) {
		return 1
	}
	return 0
}

// startFailed reports a failed start. A stop signal that arrives while the
// gateway is still starting is a requested stop, not a failure: nothing was
// served yet, so there is nothing to drain.
func startFailed(ctx context.Context, stderr io.Writer, err error) int {
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "turnpike: stopped during start-up")
		return 0
	}
	fmt.Fprintln(stderr, "turnpike:", err)
	return 1
}
