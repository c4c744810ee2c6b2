package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/turnpike-gw/turnpike/internal/books"
)

// reconcileCommand prints the reconciliation GET /api/reports/reconcile
// answers, read straight from the database (safe while nodes run: it only
// reads), and exits 1 when the books do not agree.
func reconcileCommand(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs, cfgPath := configFlags("reconcile", stderr)
	since := fs.String("since", "", "start of the window: RFC 3339 or Unix seconds (default: 24 hours before until)")
	until := fs.String("until", "", "end of the window: RFC 3339 or Unix seconds (default: now)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	w, err := books.ParseWindow(*since, *until, time.Now())
	if err != nil {
		fmt.Fprintln(stderr, "turnpike: reconcile:", err)
		return 2
	}
	ctx := context.Background()
	_, st, ok := commandStore(ctx, *cfgPath, getenv, stderr)
	if !ok {
		return 1
	}
	defer st.Close()
	rep, err := books.Reconcile(ctx, st, w, time.Now())
	if err != nil {
		fmt.Fprintln(stderr, "turnpike: reconcile:", err)
		return 1
	}
	out, _ := json.MarshalIndent(rep, "", "  ")
	fmt.Fprintf(stdout, "%s\n", out)
	if !rep.OK {
		for _, d := range rep.Differences {
			fmt.Fprintln(stderr, "turnpike: reconcile:", d.Message)
		}
		return 1
	}
	return 0
}
