package sqlstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Rows of calls without a team are kept out of the team and organisation
// indexes where the database has partial indexes, and the queries that
// filter by team or organisation still find exactly their rows (and, on
// SQLite, through those indexes).
func TestTeamIndexesHoldOnlyTeamRowsAndStillServeTheirQueries(t *testing.T) {
	for name, s := range trafficStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			day := time.Now().UTC().Truncate(24 * time.Hour)
			at := day.Add(time.Minute)
			rows := []store.UsageLog{
				{Type: store.LogConsume, UserID: 1, TokenID: 1, Quota: 5, CreatedAt: at},
				{Type: store.LogConsume, UserID: 2, TokenID: 2, Quota: 7, TeamID: 4, OrgID: 9, CreatedAt: at},
				{Type: store.LogConsume, UserID: 3, TokenID: 3, Quota: 11, TeamID: 5, OrgID: 9, CreatedAt: at},
			}
			if err := s.Logs().Insert(ctx, rows); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				kind string
				id   int64
				want int64
			}{{store.SubjectTeam, 4, 7}, {store.SubjectTeam, 5, 11}, {store.SubjectOrg, 9, 18}} {
				if n, err := s.Traffic().PeriodSpent(ctx, c.kind, c.id, day); err != nil || n != c.want {
					t.Errorf("%s %d spent %d (%v), want %d", c.kind, c.id, n, err, c.want)
				}
			}
			items, _, err := s.Logs().List(ctx, store.LogFilter{OrgID: 9}, store.Page{Page: 1, PageSize: 10})
			if err != nil || len(items) != 2 {
				t.Errorf("org filter: %d rows (%v), want 2", len(items), err)
			}
			checkPartial(t, s)
		})
	}
}

// checkPartial reads the index definitions back where they can be partial.
func checkPartial(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	var defs []string
	switch s.dialect {
	case SQLite:
		for _, idx := range []string{"usage_logs_team_created_idx", "usage_logs_org_created_idx"} {
			var def string
			if err := s.db.QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE name = ?", idx).Scan(&def); err != nil {
				t.Fatal(err)
			}
			defs = append(defs, def)
		}
		plan := explainSQLite(t, s, "SELECT SUM(quota) FROM usage_logs WHERE "+teamCond("team_id")+" AND type = ? AND created_at >= ?", 5, "consume", time.Now())
		if !strings.Contains(plan, "usage_logs_team_created_idx") {
			t.Errorf("the team spending query does not use the partial index: %s", plan)
		}
	case Postgres:
		for _, idx := range []string{"usage_logs_team_created_idx", "usage_logs_org_created_idx"} {
			var def string
			if err := s.db.QueryRowContext(ctx, "SELECT indexdef FROM pg_indexes WHERE indexname = $1", idx).Scan(&def); err != nil {
				t.Fatal(err)
			}
			defs = append(defs, def)
		}
	default:
		return // MySQL and MariaDB: no partial indexes, theirs stay whole
	}
	for _, d := range defs {
		if !strings.Contains(strings.ToLower(d), "where") {
			t.Errorf("index not partial: %s", d)
		}
	}
}

func explainSQLite(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	rows, err := s.db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		out = append(out, detail)
	}
	return strings.Join(out, "; ")
}
