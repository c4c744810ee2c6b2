package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

// agreeOnRedis refuses to run a node whose balances would live elsewhere
// than those of the other live nodes on the same database: one node
// without Redis spends from the database balances while the others spend
// from Redis, and users overspend (issue 24). The node marks its mode
// beside its lease first and then looks, so of two nodes that start
// together in different modes at least one refuses. SQLite serves one
// node, so it is not checked.
func (a *App) agreeOnRedis(ctx context.Context) error {
	if a.sql.SQLDialect() == sqlstore.SQLite {
		return nil
	}
	node, redis := a.Billing.Node(), a.Config.Redis != ""
	if err := a.sql.MarkNodeRedis(ctx, node, redis); err != nil {
		return err
	}
	withRedis, without, err := a.sql.LiveNodeModes(ctx, node)
	if err != nil {
		return err
	}
	switch {
	case !redis && len(withRedis) > 0:
		return fmt.Errorf("%s live on this database keep balances in Redis and this node has none: "+
			"set TURNPIKE_REDIS (redis: in the YAML file) to the same Redis as theirs, or users overspend; "+
			"a node stopped within the last %s may still count as live", nodesNamed(withRedis), a.Config.LeasePeriod())
	case redis && len(without) > 0:
		return fmt.Errorf("%s live on this database run without Redis and this node has TURNPIKE_REDIS set: "+
			"give every node the same TURNPIKE_REDIS (redis: in the YAML file) or unset it here, or users overspend; "+
			"a node stopped within the last %s may still count as live", nodesNamed(without), a.Config.LeasePeriod())
	}
	return nil
}

func nodesNamed(nodes []string) string {
	if len(nodes) == 1 {
		return "1 other node (" + nodes[0] + ") is"
	}
	return fmt.Sprintf("%d other nodes (%s) are", len(nodes), strings.Join(nodes, ", "))
}

// refuseStart ends the lease of a node that will not serve, so it does not
// count as live to the next one that starts.
func (a *App) refuseStart(ctx context.Context) {
	if err := a.Billing.TakeLease(context.WithoutCancel(ctx), -time.Second); err != nil {
		a.Log.Warn("billing lease not ended", "err", err)
	}
}
