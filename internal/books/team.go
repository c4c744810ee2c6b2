package books

import (
	"context"
	"fmt"
	"sort"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// teamDims maps a team usage report's groupings to the rollups' dimensions.
var teamDims = map[string]string{"user": store.DimUser, "key": store.DimToken, "model": store.DimModel}

// TeamUsage is a team's consume rows of the window per member, key or
// model (GET /api/teams/{id}/usage), from the rollups: the calls (a task's
// correction row is no call of its own), their tokens and their charge.
func TeamUsage(ctx context.Context, st store.Store, teamID int64, w store.Window, by string) ([]store.UsageGroup, error) {
	dim, ok := teamDims[by]
	if !ok {
		return nil, fmt.Errorf("team usage: cannot group by %q", by)
	}
	lines, err := SumWindow(ctx, st, w, store.RollupQuery{GroupBy: dim, Types: []string{store.LogConsume}, TeamID: teamID})
	if err != nil {
		return nil, err
	}
	groups := map[string]*store.UsageGroup{}
	for _, l := range lines {
		g := groups[l.Group]
		if g == nil {
			g = &store.UsageGroup{Key: l.Group}
			groups[l.Group] = g
		}
		g.Requests += l.Requests
		g.PromptTokens += l.InputTokens
		g.CompletionTokens += l.OutputTokens
		g.Quota += l.Quota
	}
	out := make([]store.UsageGroup, 0, len(groups))
	for _, g := range groups {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Key, out[j].Key
		if dim != store.DimModel && len(a) != len(b) {
			return len(a) < len(b) // ids in number order, as decimal digits
		}
		return a < b
	})
	return out, nil
}
