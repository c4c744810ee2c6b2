package books

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// CacheGroupings are the groupings of the cache report.
var CacheGroupings = []string{"channel", "key", "model"}

// CacheItem is one line of the cache report (CONTRACT §14): how much of
// the prompts sent through a channel, a channel's key or a model the
// providers read from their caches.
type CacheItem struct {
	Key       string  `json:"key"`
	Requests  int64   `json:"requests"`
	Input     int64   `json:"input_tokens"`
	CacheRead int64   `json:"cache_read_tokens"`
	HitRatio  float64 `json:"hit_ratio"`
}

// cacheRowOther is what the cache report reads of a consume row's other.
type cacheRowOther struct {
	CacheRead  int64 `json:"cache_read_tokens"`
	Adjustment bool  `json:"adjustment"`
	Attempts   []struct {
		KeyIndex int `json:"key_index"`
	} `json:"attempts"`
}

// Cache sums the window's consume rows per channel (its name), key
// ("<channel name>#<key index>", the key of the row's last attempt, the one
// that served) or model. A row's prompt tokens count every prompt token,
// cached ones included; its other.cache_read_tokens is what the provider
// reported reading from its cache. Rows no channel served (a task
// plugin's own answer) count only by model.
func Cache(ctx context.Context, st store.Store, w store.Window, groupBy string) ([]CacheItem, error) {
	switch groupBy {
	case "channel", "key", "model":
	default:
		return nil, ErrGrouping(groupBy)
	}
	chs, err := st.Channels().All(ctx)
	if err != nil {
		return nil, err
	}
	names := make(map[int64]string, len(chs))
	for _, c := range chs {
		names[c.ID] = c.Name
	}
	var sums map[string]*CacheItem
	if groupBy == "key" {
		sums, err = cacheByKey(ctx, st, w, names)
	} else {
		sums, err = cacheFromRollups(ctx, st, w, groupBy, names)
	}
	if err != nil {
		return nil, err
	}
	items := make([]CacheItem, 0, len(sums))
	for _, it := range sums {
		if it.Input > 0 {
			it.HitRatio = float64(it.CacheRead) / float64(it.Input)
		}
		items = append(items, *it)
	}
	sort.Slice(items, func(i, j int) bool { return items[i].Key < items[j].Key })
	return items, nil
}

// channelName is a channel's name, or "#id" for one deleted since.
func channelName(names map[int64]string, id int64) string {
	if n := names[id]; n != "" {
		return n
	}
	return "#" + strconv.FormatInt(id, 10)
}

// cacheFromRollups sums by channel or model from the hourly rollups.
func cacheFromRollups(ctx context.Context, st store.Store, w store.Window, groupBy string, names map[int64]string) (map[string]*CacheItem, error) {
	dim := store.DimModel
	if groupBy == "channel" {
		dim = store.DimChannel
	}
	lines, err := SumWindow(ctx, st, w, store.RollupQuery{GroupBy: dim, Types: []string{store.LogConsume}})
	if err != nil {
		return nil, err
	}
	sums := map[string]*CacheItem{}
	for _, l := range lines {
		key := l.Group
		if dim == store.DimChannel {
			id, _ := strconv.ParseInt(l.Group, 10, 64)
			if id == 0 {
				continue
			}
			key = channelName(names, id)
		}
		it := sums[key]
		if it == nil {
			it = &CacheItem{Key: key}
			sums[key] = it
		}
		it.Requests += l.Requests
		it.Input += l.InputTokens
		it.CacheRead += l.CacheReadTokens
	}
	return sums, nil
}

// cacheByKey sums by a channel's key, which only a row's attempts name.
func cacheByKey(ctx context.Context, st store.Store, w store.Window, names map[int64]string) (map[string]*CacheItem, error) {
	sums := map[string]*CacheItem{}
	err := st.Books().EachLog(ctx, w, []string{store.LogConsume}, func(l store.UsageLog) error {
		var o cacheRowOther
		_ = json.Unmarshal(l.Other, &o) // a row without the members read nothing from a cache
		if l.ChannelID == 0 {
			return nil
		}
		index := 0
		if n := len(o.Attempts); n > 0 {
			index = o.Attempts[n-1].KeyIndex
		}
		key := channelName(names, l.ChannelID) + "#" + strconv.Itoa(index)
		it := sums[key]
		if it == nil {
			it = &CacheItem{Key: key}
			sums[key] = it
		}
		if !o.Adjustment {
			it.Requests++
		}
		it.Input += int64(l.PromptTokens)
		it.CacheRead += o.CacheRead
		return nil
	})
	return sums, err
}
