package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

// exportCommand writes every record of the database as JSON lines: the way
// to back up and, with importCommand, to move from SQLite to PostgreSQL or
// MySQL. It reads one snapshot, so it is safe while nodes run.
func exportCommand(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs, cfgPath := configFlags("export", stderr)
	out := fs.String("out", "", "the file to write (it must not exist yet)")
	secrets := fs.Bool("with-secrets", false, "include password and key hashes, channel keys and two-factor secrets")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *out == "" || fs.NArg() != 0 {
		fmt.Fprint(stderr, "usage: turnpike export --out FILE [--with-secrets] [--config FILE]\n")
		return 2
	}
	st, code := openForCommand(*cfgPath, getenv, stderr)
	if st == nil {
		return code
	}
	defer st.Close()
	// An export may hold secrets, and overwriting an older one is never
	// what a backup meant to do.
	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		fmt.Fprintln(stderr, "turnpike: export:", err)
		return 1
	}
	counts, err := st.Export(context.Background(), f, *secrets)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(*out)
		fmt.Fprintln(stderr, "turnpike:", err)
		return 1
	}
	printCounts(stdout, "exported", counts)
	if !*secrets {
		fmt.Fprintln(stdout, "secrets left out: after an import, reset passwords, rotate keys and enter channel keys again (or export --with-secrets)")
	}
	return 0
}

// importCommand loads an export into an empty database.
func importCommand(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs, cfgPath := configFlags("import", stderr)
	var named []string
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		named, args = args[:1], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	named = append(named, fs.Args()...)
	if len(named) != 1 {
		fmt.Fprint(stderr, "usage: turnpike import FILE [--config FILE]\n")
		return 2
	}
	f, err := os.Open(named[0])
	if err != nil {
		fmt.Fprintln(stderr, "turnpike: import:", err)
		return 1
	}
	defer f.Close()
	st, code := openForCommand(*cfgPath, getenv, stderr)
	if st == nil {
		return code
	}
	defer st.Close()
	counts, err := st.Import(context.Background(), f)
	if err != nil {
		fmt.Fprintln(stderr, "turnpike:", err)
		return 1
	}
	printCounts(stdout, "imported", counts)
	return 0
}

// openForCommand loads the configuration and opens (and migrates) the
// database; a nil store comes with the exit code.
func openForCommand(cfgPath string, getenv func(string) string, stderr io.Writer) (*sqlstore.Store, int) {
	cfg, err := config.Load(cfgPath, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "turnpike:", err)
		return nil, 1
	}
	st, err := sqlstore.OpenStore(context.Background(), cfg.Database)
	if err != nil {
		fmt.Fprintln(stderr, "turnpike:", err)
		return nil, 1
	}
	return st, 0
}

func printCounts(w io.Writer, verb string, counts sqlstore.DumpCounts) {
	tables := make([]string, 0, len(counts))
	total := 0
	for t, n := range counts {
		tables = append(tables, t)
		total += n
	}
	sort.Strings(tables)
	fmt.Fprintf(w, "%s %d records\n", verb, total)
	for _, t := range tables {
		if counts[t] > 0 {
			fmt.Fprintf(w, "  %-28s %d\n", t, counts[t])
		}
	}
}
