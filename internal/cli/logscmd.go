package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/turnpike-gw/turnpike/internal/archive"
	"github.com/turnpike-gw/turnpike/internal/contentlog"
)

// logsCommand is `turnpike logs archive`: the daily usage archive run now
// (CONTRACT §20), safe while nodes run, printing one line per day.
func logsCommand(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 || args[0] != "archive" {
		fmt.Fprintln(stderr, "turnpike: logs: usage: turnpike logs archive [--config F]")
		return 2
	}
	fs, cfgPath := configFlags("logs archive", stderr)
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	ctx := context.Background()
	cfg, st, ok := commandStore(ctx, *cfgPath, getenv, stderr)
	if !ok {
		return 1
	}
	defer st.Close()
	days := cfg.Retention()
	if days <= 0 {
		fmt.Fprintln(stdout, "logs.retention_days is 0: rows are kept for ever, nothing to archive")
		return 0
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	j, ok := archive.New(cfg.Logs, days, st.Logs(), log)
	if !ok {
		fmt.Fprintln(stderr, "turnpike: logs archive: logs.archive.s3 is not set; without an archive nothing is deleted")
		return 1
	}
	// Logged contents leave with their days' rows, as on a serving node.
	j.Contents = contentlog.FromConfig(cfg.Logs, st.LogContents(), log).ArchiveWindow
	res, err := j.Run(ctx)
	for _, d := range res {
		fmt.Fprintf(stdout, "%s: %d rows archived, %d deleted\n", d.Day, d.Archived, d.Deleted)
	}
	if err != nil {
		fmt.Fprintln(stderr, "turnpike: logs archive:", err)
		return 1
	}
	if len(res) == 0 {
		fmt.Fprintf(stdout, "no rows older than %d days\n", days)
	}
	return 0
}
