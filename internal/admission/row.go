package admission

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/guardrail"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Attempt is one upstream attempt, for the usage row's routing explanation
// (other.attempts).
type Attempt struct {
	ChannelID int64  `json:"channel_id"`
	KeyIndex  int    `json:"key_index"`
	Status    int    `json:"status"`
	ErrorCode string `json:"error_code,omitempty"`
	LatencyMS int64  `json:"latency_ms"`
}

// Other is the usage row's other: how the call was served, in one shape
// for every surface. A surface adds its own fields as detail keys.
type Other struct {
	Endpoint      string    `json:"endpoint,omitempty"`
	Surface       string    `json:"surface,omitempty"`
	Stream        bool      `json:"stream"`
	UpstreamModel string    `json:"upstream_model,omitempty"`
	CacheRead     int       `json:"cache_read_tokens,omitempty"`
	CacheWrite    int       `json:"cache_write_tokens,omitempty"`
	Reasoning     int       `json:"reasoning_tokens,omitempty"`
	GroupRatio    float64   `json:"group_ratio"`
	Attempts      []Attempt `json:"attempts,omitempty"`
	// FallbackFrom is the model the client asked for when a fallback
	// model served (the row's model).
	FallbackFrom string `json:"fallback_from,omitempty"`
	// UpstreamCostUSD is what the call cost the operator at its channel
	// (UpstreamCost), a decimal string; set on consume and refund rows.
	UpstreamCostUSD string `json:"upstream_cost_usd,omitempty"`
	// PriceVersion is the version of the model's price the call was
	// admitted, and so charged, at (0: a price from before versions).
	PriceVersion int64 `json:"price_version,omitempty"`
	// Affinity is the call's cache affinity result (hit, miss, repin);
	// empty when the model has affinity off or the surface has no session.
	Affinity string `json:"affinity,omitempty"`
	// Strategy is how the channels were ordered (weighted, least_busy,
	// latency, cost).
	Strategy string `json:"strategy,omitempty"`
	// DroppedTools names (by type) the hosted tools a converted request
	// left out because its channel cannot run them (web_search, ...).
	DroppedTools []string `json:"dropped_tools,omitempty"`
	// Content is the ref of the call's kept request and answer (CONTRACT
	// §20, content logging), read through GET /api/logs/{id}/content.
	Content string `json:"content,omitempty"`
	// Guardrails is what each guardrail that fired did (CONTRACT §21):
	// kinds and counts, never the matched text.
	Guardrails []guardrail.Record `json:"guardrails,omitempty"`
	// Team and Org are the caller's team and organisation (CONTRACT §18);
	// SetOther copies them from the row.
	Team int64 `json:"team,omitempty"`
	Org  int64 `json:"org,omitempty"`
}

// SetOther writes row's other from o and detail, with the row's team and
// organisation, so every surface's rows carry them alike.
func SetOther(row *store.UsageLog, o *Other, detail map[string]any) {
	o.Team, o.Org = row.TeamID, row.OrgID
	row.Other = MarshalOther(o, detail)
	if factsHold(o, detail) {
		key := int64(0)
		if n := len(o.Attempts); n > 0 {
			key = int64(o.Attempts[n-1].KeyIndex)
		}
		row.Facts = store.NewOtherFacts(row.Other, int64(o.CacheRead), o.UpstreamCostUSD, o.UpstreamModel, key)
	}
}

// rollupMembers are the members of other that the rollups read.
var rollupMembers = [...]string{"cache_read_tokens", "upstream_cost_usd", "adjustment", "upstream_model", "attempts"}

// factsHold reports whether reading the other that MarshalOther writes of
// o and detail back gives o's own values: no detail key may fold to a
// member the rollups read (they match names case-insensitively, the last
// one winning), and the strings must be valid UTF-8, which the encoding
// would otherwise change.
func factsHold(o *Other, detail map[string]any) bool {
	for k := range detail {
		for _, m := range rollupMembers {
			if strings.EqualFold(k, m) {
				return false
			}
		}
	}
	return utf8.ValidString(o.UpstreamCostUSD) && utf8.ValidString(o.UpstreamModel)
}

// Row is the usage row of acct's call of model with usage u, started at
// start (zero: no latency); other is filled by MarshalOther.
func Row(acct billing.Account, model, requestID string, u ir.Usage, start time.Time) store.UsageLog {
	now := time.Now()
	row := store.UsageLog{UserID: acct.UserID, TokenID: acct.TokenID, Model: model, RequestID: requestID,
		PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, CreatedAt: now.UTC(), TeamID: acct.TeamID, OrgID: acct.OrgID}
	if !start.IsZero() {
		row.LatencyMS = now.Sub(start).Milliseconds()
	}
	return row
}

// MarshalOther writes o and then the detail keys in a stable order; the
// struct keeps the common case free of map sorting. A detail key never
// replaces one of o's.
func MarshalOther(o *Other, detail map[string]any) json.RawMessage {
	var stack [512]byte // a plain call's other is about 300 bytes
	var b []byte
	if fast, ok := appendOther(stack[:0], o); ok {
		b = bytes.Clone(fast)
	} else {
		b, _ = json.Marshal(o)
	}
	if len(detail) == 0 {
		return b
	}
	keys := make([]string, 0, len(detail))
	for k := range detail {
		if !otherKeys[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	b = b[:len(b)-1]
	for _, k := range keys {
		v, err := json.Marshal(detail[k])
		if err != nil {
			continue
		}
		kb, _ := json.Marshal(k)
		b = append(b, ',')
		b = append(b, kb...)
		b = append(b, ':')
		b = append(b, v...)
	}
	return append(b, '}')
}

// otherKeys are Other's own keys.
var otherKeys = map[string]bool{"endpoint": true, "surface": true, "stream": true, "upstream_model": true,
	"cache_read_tokens": true, "cache_write_tokens": true, "reasoning_tokens": true, "group_ratio": true,
	"attempts": true, "fallback_from": true, "upstream_cost_usd": true, "price_version": true, "affinity": true, "strategy": true,
	"guardrails": true, "team": true, "org": true, "content": true}
