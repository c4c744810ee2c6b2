package books

import (
	"context"
	"sort"
	"strconv"
	"time"

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

// cacheByKey sums by a channel's key, which only a row's attempts and the
// channel rollups name: the whole hours of w from the rollups (the daily
// layer where it can), the parts of an hour at w's edges from the rows;
// until the channel rollups hold every row (their fill after an upgrade),
// every row of w.
func cacheByKey(ctx context.Context, st store.Store, w store.Window, names map[int64]string) (map[string]*CacheItem, error) {
	sums := map[string]*CacheItem{}
	add := func(k store.ChannelKey, s store.ChannelSums) {
		if s.Consumes == 0 {
			return // refunds, or a cut day's bucket less the hours outside w
		}
		key := channelName(names, k.ChannelID) + "#" + strconv.FormatInt(k.KeyIndex, 10)
		it := sums[key]
		if it == nil {
			it = &CacheItem{Key: key}
			sums[key] = it
		}
		it.Requests += s.Requests
		it.Input += s.InputTokens
		it.CacheRead += s.CacheReadTokens
	}
	ready, err := st.Rollups().ChannelsReady(ctx)
	if err != nil {
		return nil, err
	}
	from, to := ceil(w.Since, time.Hour), w.Until.Truncate(time.Hour)
	edges := []store.Window{w}
	if ready && from.Before(to) {
		edges = []store.Window{{Since: w.Since, Until: from}, {Since: to, Until: w.Until}}
		lines, err := st.Rollups().SumChannels(ctx, store.ChannelQuery{Since: from, Until: to, Days: true})
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			add(l.ChannelKey, l.ChannelSums)
		}
	}
	for _, e := range edges {
		if !e.Since.Before(e.Until) {
			continue
		}
		err := st.Books().EachLog(ctx, e, []string{store.LogConsume}, func(l store.UsageLog) error {
			if k, s, ok := store.ChannelRollupOf(l); ok {
				add(k, s)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return sums, nil
}
