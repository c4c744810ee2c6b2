package books

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
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
	sort.Slice(items, func(i, j int) bool {
		pi, pj := periodKey(items[i]), periodKey(items[j])
		if pi != pj {
			return pi < pj
		}
		if items[i].Quota != items[j].Quota {
			return items[i].Quota > items[j].Quota
		}
		return items[i].Key < items[j].Key
	})
	return items, nil
}

// usageItems folds the lines of each group and period (one per row type)
// into its item: calls and tokens from consume lines, less the refunds,
// errors from error lines.
func usageItems(lines []store.RollupLine) []UsageItem {
	type acc struct {
		item UsageItem
		cost big.Int
	}
	byKey := map[sumKey]*acc{}
	for _, l := range lines {
		k := sumKey{group: l.Group, period: l.Period.Unix()}
		a := byKey[k]
		if a == nil {
			a = &acc{item: UsageItem{Key: l.Group}}
			if !l.Period.IsZero() {
				p := l.Period
				a.item.Period = &p
			}
			byKey[k] = a
		}
		it := &a.item
		switch l.Type {
		case store.LogRefund:
			it.Quota -= l.Quota
			a.cost.Sub(&a.cost, l.UpstreamCost)
		case store.LogError:
			it.Errors += l.Errors
		default:
			it.Requests += l.Requests
			it.InputTokens += l.InputTokens
			it.OutputTokens += l.OutputTokens
			it.CacheReadTokens += l.CacheReadTokens
			it.Quota += l.Quota
			a.cost.Add(&a.cost, l.UpstreamCost)
		}
	}
	items := make([]UsageItem, 0, len(byKey))
	for _, a := range byKey {
		if a.item.InputTokens > 0 {
			a.item.CacheHitRatio = float64(a.item.CacheReadTokens) / float64(a.item.InputTokens)
		}
		a.item.UpstreamCostUSD = picoNumber(&a.cost)
		items = append(items, a.item)
	}
	return items
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
