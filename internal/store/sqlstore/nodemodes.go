package sqlstore

import (
	"context"
	"database/sql"
)

// nodeModeMigration records, beside each node's billing lease, whether the
// node keeps balances in Redis. Nodes on one database must agree: a node
// without Redis spends from the database balances while the others spend
// from Redis, and users overspend. NULL is a node that has not said (an
// older binary, or one between taking its lease and marking it).
var nodeModeMigration = Migration{Version: 131, Name: "node redis mode", SQL: `
ALTER TABLE billing_nodes ADD redis {{int}} NULL`}

// MarkNodeRedis records whether node (which holds a lease) uses Redis.
func (s *Store) MarkNodeRedis(ctx context.Context, node string, redis bool) error {
	v := 0
	if redis {
		v = 1
	}
	return s.execOne(ctx, s.db, "mark node mode", "UPDATE billing_nodes SET redis = ? WHERE node_id = ?", v, node)
}

// LiveNodeModes lists the nodes other than except whose lease has not
// ended (by the database's clock), split by whether they use Redis.
func (s *Store) LiveNodeModes(ctx context.Context, except string) (withRedis, without []string, err error) {
	now, err := s.DBNow(ctx)
	if err != nil {
		return nil, nil, err
	}
	rows, err := s.db.QueryContext(ctx, s.Rebind("SELECT node_id, redis FROM billing_nodes WHERE lease_until > ? AND node_id <> ? AND redis IS NOT NULL ORDER BY node_id"),
		now.UnixMilli(), except)
	if err != nil {
		return nil, nil, wrap(err, "list live nodes")
	}
	defer rows.Close()
	for rows.Next() {
		var node string
		var redis sql.NullInt64
		if err := rows.Scan(&node, &redis); err != nil {
			return nil, nil, wrap(err, "list live nodes")
		}
		if redis.Int64 != 0 {
			withRedis = append(withRedis, node)
		} else {
			without = append(without, node)
		}
	}
	return withRedis, without, wrap(rows.Err(), "list live nodes")
}
