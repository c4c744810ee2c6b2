package sqlstore

import (
	"context"

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
// (channel_id, created_at) index, a page at a time after the last row seen.
func (r booksRepo) EachChannelLog(ctx context.Context, channelID int64, w store.Window, types []string, fn func(store.UsageLog) error) error {
	return r.eachLogPage(ctx, "channel_id = ? AND created_at < ?", []any{channelID, dbTime(w.Until)}, w, types, "read channel logs", fn)
}
