package relay

import (
	"bytes"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/tokenize"
)

var (
	responseDoneMarker    = []byte(`"response.done"`)
	responseCreatedMarker = []byte(`"response.created"`)
	deltaMarker           = []byte(`delta"`)
)

// maxRealtimeText bounds the delivered text kept to count an interrupted
// response's output.
const maxRealtimeText = 1 << 20

// rtOutput is the output of the response in progress as it was relayed: if
// the session ends before its response.done, the response is billed on it.
type rtOutput struct {
	active bool
	id     string
	text   strings.Builder
	// audioBytes is base64 audio relayed without a transcript.
	audioBytes int
}

// bill follows one upstream frame: a response.done settles the current
// reservation on its usage (one consume row per response) and takes a new
// one for the next response; deltas are remembered in case the session ends
// first. It reports false when the new reservation no longer fits, i.e. the
// account ran out of quota.
func (s *rtSession) bill(data []byte) bool {
	switch {
	case bytes.Contains(data, responseDoneMarker):
		ev := gjson.ParseBytes(data)
		if ev.Get("type").String() != "response.done" {
			return true
		}
		u, detail := realtimeUsage(ev.Get("response.usage"))
		detail["response_id"] = ev.Get("response.id").String()
		if s.clientGone.Load() {
			detail["client_left"] = true
		}
		s.out = rtOutput{}
		s.responding.Store(false)
		s.guards = s.rtg.take()
		return s.settleAndRenew(charge{usage: u, usd: s.price.CallCost(1), detail: detail}, s.estimate) == nil
	case bytes.Contains(data, responseCreatedMarker):
		if t := gjson.GetBytes(data, "type"); t.Str == "response.created" {
			s.out = rtOutput{active: true, id: gjson.GetBytes(data, "response.id").String()}
			s.responding.Store(true)
		}
	case s.out.active && bytes.Contains(data, deltaMarker):
		s.out.add(data)
	}
	return true
}

// add keeps a delta's text (text and audio transcripts, in both the beta and
// the GA event names); audio itself is only measured.
func (o *rtOutput) add(data []byte) {
	r := gjson.GetManyBytes(data, "type", "delta")
	typ, delta := r[0].Str, r[1].Str
	switch {
	case strings.HasSuffix(typ, "text.delta") || strings.HasSuffix(typ, "transcript.delta"):
		if o.text.Len()+len(delta) <= maxRealtimeText {
			o.text.WriteString(delta)
		}
	case strings.HasSuffix(typ, "audio.delta"):
		o.audioBytes += len(delta)
	}
}

// endSession releases what the session still holds when either side leaves.
// A response that was under way and whose response.done never came (the
// drain after the client left ran out, or the upstream broke) is billed on
// the input its reservation estimated plus the output delivered so far, so
// leaving early never makes a response cheaper than its reservation's
// input; delivered audio cannot be counted, so a response that sent any
// bills its reservation (CONTRACT §13). An idle reservation is returned.
func (s *rtSession) endSession() {
	if s.hold == nil {
		return
	}
	if !s.out.active {
		s.refund(nil)
		return
	}
	s.guards = s.rtg.take()
	out := tokenize.Count(s.model, s.out.text.String())
	detail := map[string]any{"response_id": s.out.id, "interrupted": true, "input_estimated": true}
	if s.clientGone.Load() {
		detail["client_left"] = true
	}
	ch := charge{usage: ir.Usage{InputTokens: realtimeInputEstimate, OutputTokens: out}, usd: s.price.CallCost(1), detail: detail}
	if s.out.audioBytes > 0 {
		detail["output_audio_bytes"] = s.out.audioBytes
		s.settleAt(ch, s.hold.Reserved)
	} else {
		s.settle(ch)
	}
	s.out = rtOutput{}
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
	} {
		if n := firstInt(u, path); n > 0 {
			detail[key] = n
		}
	}
	return usage, detail
}
