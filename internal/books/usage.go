package books

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// UsageGroupings are the groupings of the usage report.
var UsageGroupings = []string{store.DimUser, store.DimToken, store.DimModel, store.DimChannel, store.DimTeam}

// UsageItem is one line of the usage report (CONTRACT §20): one group's
// calls in one period. Requests are the charged calls, Errors the failed
// ones; Quota and UpstreamCostUSD are net of refunds.
type UsageItem struct {
	Key             string     `json:"key"`
	Name            string     `json:"name,omitempty"`
	Period          *time.Time `json:"period,omitempty"`
	Requests        int64      `json:"requests"`
	InputTokens     int64      `json:"input_tokens"`
	OutputTokens    int64      `json:"output_tokens"`
	CacheReadTokens int64      `json:"cache_read_tokens"`
	CacheHitRatio   float64    `json:"cache_hit_ratio"`
	Quota           int64      `json:"quota"`
	// UpstreamCostUSD is left out of a plain user's report.
	UpstreamCostUSD json.Number `json:"upstream_cost_usd,omitempty"`
	Errors          int64       `json:"errors"`
}

// ErrGranularity is a granularity the usage report does not know.
type ErrGranularity string

func (e ErrGranularity) Error() string {
	return fmt.Sprintf("granularity must be hour or day, not %q", string(e))
}

// UsageFilter keeps one user's or one team's usage (0: everyone's).
type UsageFilter struct{ UserID, TeamID int64 }

// UsageReport sums the window per group and period from the rollups.
func UsageReport(ctx context.Context, st store.Store, w store.Window, groupBy, granularity string) ([]UsageItem, error) {
	return FilteredUsageReport(ctx, st, w, groupBy, granularity, UsageFilter{})
}

// FilteredUsageReport is UsageReport over the usage f keeps.
func FilteredUsageReport(ctx context.Context, st store.Store, w store.Window, groupBy, granularity string, f UsageFilter) ([]UsageItem, error) {
	known := false
	for _, g := range UsageGroupings {
		known = known || g == groupBy
	}
	if !known {
		return nil, ErrGrouping(groupBy)
	}
	if granularity != "hour" && granularity != "day" {
		return nil, ErrGranularity(granularity)
	}
	lines, err := SumWindow(ctx, st, w, store.RollupQuery{GroupBy: groupBy, Granularity: granularity,
		Types: []string{store.LogConsume, store.LogRefund, store.LogError}, UserID: f.UserID, TeamID: f.TeamID})
	if err != nil {
		return nil, err
	}
	items := usageItems(lines)
	sortItems(items)
	return items, nil
}

// usageItems folds the lines of each group and period (one per row type)
// into its item: calls and tokens from consume lines, less the refunds,
// errors from error lines. The report by key folds 12,000 lines: items
// are kept in one slice the map indexes (no allocation per item) and a
// cost is summed as an int64 until it outgrows one.
func usageItems(lines []store.RollupLine) []UsageItem {
	byKey := make(map[sumKey]int, len(lines))
	items := make([]UsageItem, 0, len(lines))
	costs := make([]picoSum, 0, len(lines))
	for _, l := range lines {
		k := sumKey{group: l.Group, period: l.Period.Unix()}
		i, ok := byKey[k]
		if !ok {
			i = len(items)
			byKey[k] = i
			it := UsageItem{Key: l.Group}
			if !l.Period.IsZero() {
				p := l.Period
				it.Period = &p
			}
			items = append(items, it)
			costs = append(costs, picoSum{})
		}
		it := &items[i]
		switch l.Type {
		case store.LogRefund:
			it.Quota -= l.Quota
			costs[i].add(l.UpstreamCost, true)
		case store.LogError:
			it.Errors += l.Errors
		default:
			it.Requests += l.Requests
			it.InputTokens += l.InputTokens
			it.OutputTokens += l.OutputTokens
			it.CacheReadTokens += l.CacheReadTokens
			it.Quota += l.Quota
			costs[i].add(l.UpstreamCost, false)
		}
	}
	for i := range items {
		it := &items[i]
		if it.InputTokens > 0 {
			it.CacheHitRatio = float64(it.CacheReadTokens) / float64(it.InputTokens)
		}
		it.UpstreamCostUSD = costs[i].number()
	}
	return items
}

// sortItems orders the report by period, then quota (largest first), then
// key. The items are large: their order is found on their indexes and
// each is moved once.
func sortItems(items []UsageItem) {
	order := make([]int32, len(items))
	for i := range order {
		order[i] = int32(i)
	}
	periods := make([]int64, len(items))
	for i := range items {
		periods[i] = periodKey(items[i])
	}
	slices.SortFunc(order, func(a, b int32) int {
		x, y := &items[a], &items[b]
		return cmp.Or(cmp.Compare(periods[a], periods[b]), cmp.Compare(y.Quota, x.Quota), strings.Compare(x.Key, y.Key))
	})
	sorted := make([]UsageItem, len(items))
	for i, j := range order {
		sorted[i] = items[j]
	}
	copy(items, sorted)
}

// picoSum adds picodollars as an int64 and moves to a big.Int only when a
// sum outgrows it.
type picoSum struct {
	n   int64
	big *big.Int
}

func (p *picoSum) add(v *big.Int, neg bool) {
	if v == nil {
		return
	}
	if p.big == nil && v.IsInt64() && v.Int64() != math.MinInt64 {
		x := v.Int64()
		if neg {
			x = -x
		}
		// A sum moved against x's sign wrapped around.
		if s := p.n + x; (x >= 0) == (s >= p.n) {
			p.n = s
			return
		}
	}
	if p.big == nil {
		p.big = big.NewInt(p.n)
	}
	if neg {
		p.big.Sub(p.big, v)
	} else {
		p.big.Add(p.big, v)
	}
}

func (p *picoSum) number() json.Number {
	if p.big != nil {
		return picoNumber(p.big)
	}
	return picoNumber(big.NewInt(p.n))
}

// picoNumber is number(picoUSD(n)) without math/big's division for an
// amount that fits an int64 (every window short of millions of dollars):
// the report by key formats one per key and day, and the division was
// half of its time in Go.
func picoNumber(n *big.Int) json.Number {
	if !n.IsInt64() {
		return number(picoUSD(n))
	}
	v := n.Int64()
	if v == math.MinInt64 {
		return number(picoUSD(n))
	}
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	whole, frac := v/1_000_000_000_000, v%1_000_000_000_000
	if frac == 0 {
		if whole == 0 {
			return "0"
		}
		return json.Number(sign + strconv.FormatInt(whole, 10))
	}
	digits := strconv.FormatInt(frac+1_000_000_000_000, 10)[1:] // twelve, with leading zeros
	return json.Number(sign + strconv.FormatInt(whole, 10) + "." + strings.TrimRight(digits, "0"))
}

func periodKey(it UsageItem) int64 {
	if it.Period == nil {
		return 0
	}
	return it.Period.Unix()
}
