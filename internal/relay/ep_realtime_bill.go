package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

var responseDoneMarker = []byte(`"response.done"`)

// bill charges one response.done event: its usage settles the current
// reservation (one consume row per response) and a new reservation is taken
// for the next one. It reports false when that reservation no longer fits,
// i.e. the account ran out of quota.
func (s *rtSession) bill(ctx context.Context, data []byte) bool {
	if !bytes.Contains(data, responseDoneMarker) {
		return true // the common frame (audio and text deltas) is never parsed
	}
	ev := gjson.ParseBytes(data)
	if ev.Get("type").String() != "response.done" {
		return true
	}
	u, detail := realtimeUsage(ev.Get("response.usage"))
	detail["response_id"] = ev.Get("response.id").String()
	ctx = context.WithoutCancel(ctx)
	charge, err := s.rl.Billing.Charge(s.price, u, s.price.CallCost(1), s.principal.Group)
	if err != nil {
		s.rl.Logger.Error("realtime response could not be priced; charging the reservation", "err", err)
		charge = s.hold.Reserved
	}
	s.hold.Settle(ctx, charge, s.logRow(u, detail))
	hold, err := s.rl.Billing.Reserve(ctx, s.acct, s.rl.Billing.NewRequestKey("realtime"), s.estimate)
	s.hold = hold
	return err == nil
}

// realtimeUsage reads a realtime usage object; the text and audio split is
// kept for the log, while billing uses the input and output totals.
func realtimeUsage(u gjson.Result) (ir.Usage, map[string]any) {
	usage := ir.Usage{
		InputTokens:     firstInt(u, "input_tokens"),
		OutputTokens:    firstInt(u, "output_tokens"),
		CacheReadTokens: firstInt(u, "input_token_details.cached_tokens"),
	}
	if usage.CacheReadTokens > usage.InputTokens {
		usage.CacheReadTokens = usage.InputTokens
	}
	detail := map[string]any{}
	for key, path := range map[string]string{
		"input_text_tokens": "input_token_details.text_tokens", "input_audio_tokens": "input_token_details.audio_tokens",
		"output_text_tokens": "output_token_details.text_tokens", "output_audio_tokens": "output_token_details.audio_tokens",
		"cache_read_tokens": "input_token_details.cached_tokens",
	} {
		if n := firstInt(u, path); n > 0 {
			detail[key] = n
		}
	}
	return usage, detail
}

func (s *rtSession) logRow(u ir.Usage, detail map[string]any) store.UsageLog {
	other := map[string]any{"endpoint": "realtime", "stream": true, "group_ratio": s.rl.Billing.Ratio(s.principal.Group),
		"upstream_model": s.channel.MapModel(s.model)}
	for k, v := range detail {
		other[k] = v
	}
	row := store.UsageLog{UserID: s.principal.UserID, TokenID: s.principal.TokenID, Model: s.model, ChannelID: s.channel.ID,
		PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens,
		LatencyMS: time.Since(s.start).Milliseconds(), CreatedAt: time.Now().UTC()}
	row.Other, _ = json.Marshal(other)
	return row
}
