package sqlstore

import (
	"context"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// channelLogIndexMigration gives the rows of one channel over a span of
// days an index of their own: the provider comparison reads a channel's
// rows of the export's days, a fortieth of the window's rows on a gateway
// of forty channels, where it read every row of the window. On PostgreSQL
// it is built CONCURRENTLY, outside the migration's transaction, so usage
// writes never wait for the build; MySQL builds it in place.
var channelLogIndexMigration = Migration{Version: 201, Name: "usage log channel time index", SQL: `
CREATE INDEX usage_logs_channel_created_idx ON usage_logs (channel_id, created_at);
`,
	PerDialect: map[Dialect]string{
		MySQL:    "CREATE INDEX usage_logs_channel_created_idx ON usage_logs (channel_id, created_at) ALGORITHM=INPLACE LOCK=NONE;",
		Postgres: "",
	},
	Online: map[Dialect][]string{Postgres: {
		"DROP INDEX CONCURRENTLY IF EXISTS usage_logs_channel_created_idx",
		"CREATE INDEX CONCURRENTLY usage_logs_channel_created_idx ON usage_logs (channel_id, created_at)",
	}},
}

// EachChannelLog reads the channel's rows of the window through their
// index in (created_at, id) order, a page at a time after the last row
// seen.
func (r booksRepo) EachChannelLog(ctx context.Context, channelID int64, w store.Window, types []string, fn func(store.UsageLog) error) error {
	// The page starts at the last row seen, in the index's condition
	// (created_at >= at), not only in a filter: a filter would make every
	// page read the window's rows before it again.
	where := "channel_id = ? AND created_at < ?"
	args := []any{channelID, dbTime(w.Until)}
	if len(types) > 0 {
		where += " AND type IN (?" + strings.Repeat(", ?", len(types)-1) + ")"
		for _, t := range types {
			args = append(args, t)
		}
	}
	q := r.s.Rebind(logSelect + " WHERE " + where + " AND created_at >= ? AND (created_at > ? OR id > ?) ORDER BY created_at, id LIMIT ?")
	at, after := dbTime(w.Since), int64(0)
	for {
		rows, err := r.s.db.QueryContext(ctx, q, append(args, at, at, after, booksPage)...)
		if err != nil {
			return wrap(err, "read channel logs")
		}
		page, err := collect(rows, scanLog)
		if err != nil {
			return wrap(err, "read channel logs")
		}
		for _, l := range page {
			if err := fn(l); err != nil {
				return err
			}
			at, after = dbTime(l.CreatedAt), l.ID
		}
		if len(page) < booksPage {
			return nil
		}
	}
}
