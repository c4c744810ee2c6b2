package books

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"

	"github.com/turnpike-gw/turnpike/internal/admission"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Groupings of the margin report.
var Groupings = []string{"channel", "model", "user", "token"}

// MarginItem is one group's line of the margin report. Dollar figures
// are JSON numbers written with the exact decimal digits of the sums.
type MarginItem struct {
	Key string `json:"key"`
	// Name is the channel's, user's or key's name where Key is its id.
	Name            string      `json:"name,omitempty"`
	Requests        int64       `json:"requests"`
	ChargedQuota    int64       `json:"charged_quota"`
	ChargedUSD      json.Number `json:"charged_usd"`
	UpstreamCostUSD json.Number `json:"upstream_cost_usd"`
	MarginUSD       json.Number `json:"margin_usd"`
}

type marginSum struct {
	requests, quota int64
	cost            big.Int
}

// marginDims maps the margin report's groupings to the rollups' dimensions.
var marginDims = map[string]string{"channel": store.DimChannel, "model": store.DimModel, "user": store.DimUser, "token": store.DimToken}

// Margin sums the window's consume rows less its refund rows per group:
// what was charged (quota and dollars at quotaPerUSD) and what the calls
// cost upstream (other.upstream_cost_usd), from the hourly rollups. A
// task's correction rows change its sums but are not requests of their own.
func Margin(ctx context.Context, st store.Store, w store.Window, groupBy string, quotaPerUSD int64) ([]MarginItem, error) {
	dim, ok := marginDims[groupBy]
	if !ok {
		return nil, ErrGrouping(groupBy)
	}
	lines, err := SumWindow(ctx, st, w, store.RollupQuery{GroupBy: dim, Types: []string{store.LogConsume, store.LogRefund}})
	if err != nil {
		return nil, err
	}
	sums := map[string]*marginSum{}
	for _, l := range lines {
		s := sums[l.Group]
		if s == nil {
			s = &marginSum{}
			sums[l.Group] = s
		}
		if l.Type == store.LogRefund {
			s.quota -= l.Quota
			s.cost.Sub(&s.cost, l.UpstreamCost)
			continue
		}
		s.requests += l.Requests
		s.quota += l.Quota
		s.cost.Add(&s.cost, l.UpstreamCost)
	}
	items := make([]MarginItem, 0, len(sums))
	for k, s := range sums {
		charged := big.NewRat(s.quota, quotaPerUSD)
		cost := picoUSD(&s.cost)
		margin := new(big.Rat).Sub(charged, cost)
		items = append(items, MarginItem{Key: k, Requests: s.requests, ChargedQuota: s.quota,
			ChargedUSD: number(charged), UpstreamCostUSD: number(cost), MarginUSD: number(margin)})
	}
	sort.Slice(items, func(i, j int) bool {
		if items[i].ChargedQuota != items[j].ChargedQuota {
			return items[i].ChargedQuota > items[j].ChargedQuota
		}
		return items[i].Key < items[j].Key
	})
	return items, nameItems(ctx, st, groupBy, items)
}

// ErrGrouping is a group_by the report does not know.
type ErrGrouping string

func (e ErrGrouping) Error() string {
	return fmt.Sprintf("group_by must be channel, model, user or token, not %q", string(e))
}

// nameItems adds the names of the channels, users or keys the items are,
// read in one query; a record deleted since keeps only its id.
func nameItems(ctx context.Context, st store.Store, by string, items []MarginItem) error {
	if by != "channel" && by != "user" && by != "token" {
		return nil
	}
	ids := make([]int64, 0, len(items))
	for _, it := range items {
		if id, err := strconv.ParseInt(it.Key, 10, 64); err == nil && id != 0 {
			ids = append(ids, id)
		}
	}
	names, err := st.Books().Names(ctx, by, ids)
	if err != nil {
		return err
	}
	for i := range items {
		if id, err := strconv.ParseInt(items[i].Key, 10, 64); err == nil {
			items[i].Name = names[id]
		}
	}
	return nil
}

// number is an exact dollar amount as a JSON number.
func number(r *big.Rat) json.Number { return json.Number(admission.USD(r)) }
