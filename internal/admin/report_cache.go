package admin

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func (a *API) routeReports(mux *http.ServeMux) {
	a.route(mux, "GET /api/reports/cache", store.RoleAdmin, "report", a.cacheReport)
}

// cacheItem is one line of the cache report: how much of the prompts sent
// through it the providers read from their caches.
type cacheItem struct {
	Key       string  `json:"key"`
	Requests  int64   `json:"requests"`
	Input     int64   `json:"input_tokens"`
	CacheRead int64   `json:"cache_read_tokens"`
	HitRatio  float64 `json:"hit_ratio"`
}

// cacheRowOther is what the report reads of a consume row's other.
type cacheRowOther struct {
	CacheRead int64 `json:"cache_read_tokens"`
	Attempts  []struct {
		KeyIndex int `json:"key_index"`
	} `json:"attempts"`
}

// cacheReport answers GET /api/reports/cache (CONTRACT §14) from the
// consume rows of the window: a row's prompt tokens count every prompt
// token, cached ones included, and its other.cache_read_tokens what the
// provider read from its cache; the serving key is its last attempt.
func (a *API) cacheReport(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	since, until, err := reportWindow(r, time.Now())
	if err != nil {
		return err
	}
	groupBy := r.URL.Query().Get("group_by")
	if groupBy == "" {
		groupBy = "channel"
	}
	if groupBy != "channel" && groupBy != "key" && groupBy != "model" {
		return badField("group_by", "must be channel, key or model")
	}
	names, err := a.channelNames(r)
	if err != nil {
		return err
	}
	items := map[string]*cacheItem{}
	err = a.d.Store.Logs().Each(r.Context(), store.LogFilter{Type: store.LogConsume, Since: since, Until: until}, func(l *store.UsageLog) error {
		var o cacheRowOther
		if len(l.Other) > 0 {
			_ = json.Unmarshal(l.Other, &o) // a row without the members counts none
		}
		var key string
		switch groupBy {
		case "model":
			key = l.Model
		case "channel", "key":
			if l.ChannelID == 0 {
				return nil // served by no channel (a task plugin's own answer)
			}
			key = names[l.ChannelID]
			if key == "" {
				key = "#" + strconv.FormatInt(l.ChannelID, 10) // a channel deleted since
			}
			if groupBy == "key" {
				index := 0
				if n := len(o.Attempts); n > 0 {
					index = o.Attempts[n-1].KeyIndex
				}
				key += "#" + strconv.Itoa(index)
			}
		}
		it := items[key]
		if it == nil {
			it = &cacheItem{Key: key}
			items[key] = it
		}
		it.Requests++
		it.Input += int64(l.PromptTokens)
		it.CacheRead += o.CacheRead
		return nil
	})
	if err != nil {
		return err
	}
	out := make([]cacheItem, 0, len(items))
	for _, it := range items {
		if it.Input > 0 {
			it.HitRatio = float64(it.CacheRead) / float64(it.Input)
		}
		out = append(out, *it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	apijson.Write(w, http.StatusOK, map[string]any{"items": out})
	return nil
}

// channelNames maps every channel's id to its name.
func (a *API) channelNames(r *http.Request) (map[int64]string, error) {
	chs, err := a.d.Store.Channels().All(r.Context())
	if err != nil {
		return nil, err
	}
	names := make(map[int64]string, len(chs))
	for _, c := range chs {
		names[c.ID] = c.Name
	}
	return names, nil
}
