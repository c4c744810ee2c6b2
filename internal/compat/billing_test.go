package compat

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// endpointPrices price each endpoint model so that every consume row's
// quota can be recomputed from what the row logged (at the default 500000
// quota units per USD).
var endpointPrices = map[string]config.SeedPrice{
	instructModel:    {InputPerMTok: inputPerMTok, OutputPerMTok: outputPerMTok},
	embedModel:       {InputPerMTok: inputPerMTok},
	geminiEmbedModel: {InputPerMTok: inputPerMTok},
	imageModel: {PerCall: 0.04, Extra: map[string]any{"image_factors": map[string]any{
		"1024x1024": 1, "1792x1024": 2, "hd": 1.5}}},
	whisperModel:      {PerCall: 0.0002, Extra: map[string]any{"per_minute": 0.006}},
	ttsModel:          {Extra: map[string]any{"per_million_chars": 15}},
	moderationModel:   {PerCall: 0.0001},
	defaultModeration: {PerCall: 0.0001},
	rerankModel:       {InputPerMTok: inputPerMTok},
	searchModel:       {PerCall: 0.001},
	realtimeModel:     {InputPerMTok: inputPerMTok, OutputPerMTok: outputPerMTok},
	batchModel:        {InputPerMTok: inputPerMTok, OutputPerMTok: outputPerMTok},
}

// billedEndpoint is one endpoint the Node tests must have exercised, with
// the quota each of its consume rows must carry.
type billedEndpoint struct {
	model, endpoint string
	quota           func(r store.UsageLog, other map[string]any) int64
}

func fixed(q int64) func(store.UsageLog, map[string]any) int64 {
	return func(store.UsageLog, map[string]any) int64 { return q }
}

var billedEndpoints = []billedEndpoint{
	{instructModel, "completions", fixed(wantQuota)},
	{embedModel, "embeddings", fixed(fakeInputTokens)}, // 21 tokens at $2/M
	// Gemini reports no usage: the gateway counts the input, $2/M → 1 unit a token.
	{geminiEmbedModel, "embeddings", func(r store.UsageLog, _ map[string]any) int64 { return int64(r.PromptTokens) }},
	{imageModel, "images_generations", imageQuota},
	{imageModel, "images_edits", imageQuota},
	{whisperModel, "audio_transcriptions", audioQuota},
	{whisperModel, "audio_translations", audioQuota},
	// $15 per million characters: 7.5 units a character, rounded half up.
	{ttsModel, "audio_speech", func(_ store.UsageLog, o map[string]any) int64 { return (int64(num(o, "characters"))*15 + 1) / 2 }},
	{moderationModel, "moderations", fixed(50)},
	{defaultModeration, "moderations", fixed(50)},
	{rerankModel, "rerank", fixed(fakeInputTokens)},
	{searchModel, "search", fixed(500)},
	{realtimeModel, "realtime", fixed(wantQuota)},
	{"up-openai", "responses", fixed(wantQuota)},
	{"up-openai", "responses_compact", fixed(wantQuota)},
	{"up-anthropic", "responses", fixed(wantQuota)},
	// Each batch of the Node tests has two lines, billed at the live price
	// (the gateway runs them) in one row per batch.
	{batchModel, "batch", fixed(2 * wantQuota)},
}

// imageQuota is $0.04 an image (20000 units) times the size and quality
// factors of the price.
func imageQuota(_ store.UsageLog, o map[string]any) int64 {
	f := map[string]float64{"1792x1024": 2, "hd": 1.5}
	q := 20000 * num(o, "images")
	for _, k := range []string{"size", "quality"} {
		if v, ok := f[str2(o, k)]; ok {
			q *= v
		}
	}
	return int64(math.Round(q))
}

// audioQuota is $0.006 a minute (50 units a second) when the answer stated
// a duration, else the $0.0002 per call (100 units).
func audioQuota(_ store.UsageLog, o map[string]any) int64 {
	if _, ok := o["duration_seconds"]; ok {
		return int64(math.Round(50 * num(o, "duration_seconds")))
	}
	return 100
}

func num(o map[string]any, k string) float64 {
	f, _ := o[k].(float64)
	return f
}

func str2(o map[string]any, k string) string {
	s, _ := o[k].(string)
	return s
}

// checkEndpointBilling requires, for every endpoint other than chat, as
// many consume rows naming it in other.endpoint as the fakes gave answers
// (at least one), each priced by the endpoint's rule.
func checkEndpointBilling(t *testing.T, st store.Store, fakes map[string]*fake) {
	t.Helper()
	served, perModel := map[endpointKey]int{}, map[string]int{}
	for _, f := range fakes {
		for k, v := range f.servedCounts() {
			served[k] += v
			perModel[k.model] += v
		}
	}
	ctx := context.Background()
	for _, be := range billedEndpoints {
		want := served[endpointKey{be.model, be.endpoint}]
		var rows []store.UsageLog
		for _, r := range waitForRows(ctx, t, st, be.model, max(perModel[be.model], 1)) {
			if otherOf(r)["endpoint"] == be.endpoint {
				rows = append(rows, r)
			}
		}
		switch {
		case len(rows) == 0:
			t.Errorf("%s on %s: no consume row with other.endpoint %q (the upstream answered %d times)", be.endpoint, be.model, be.endpoint, want)
			continue
		case want > 0 && len(rows) != want:
			t.Errorf("%s on %s: %d consume rows for %d upstream answers", be.endpoint, be.model, len(rows), want)
		}
		if testing.Verbose() {
			// A converted call reaches the upstream as chat, so only the
			// gateway knows which endpoint it came from.
			answers := fmt.Sprintf("%d upstream answers", want)
			if want == 0 {
				answers = "answers the upstream saw as chat"
			}
			t.Logf("billed %s on %s: %d consume rows for %s", be.endpoint, be.model, len(rows), answers)
		}
		for _, r := range rows {
			o := otherOf(r)
			if q := be.quota(r, o); r.Quota != q || q <= 0 {
				t.Errorf("%s on %s: consume row %d charged quota %d, want %d (tokens %d/%d, other %s)",
					be.endpoint, be.model, r.ID, r.Quota, q, r.PromptTokens, r.CompletionTokens, r.Other)
			}
		}
	}
}

func otherOf(r store.UsageLog) map[string]any {
	var o map[string]any
	_ = json.Unmarshal(r.Other, &o)
	return o
}
