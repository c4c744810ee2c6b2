package relay

import (
	"context"
	"math/big"
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// maxImages bounds n so a typo cannot reserve a fortune.
const maxImages = 128

// imagesEndpoint is POST /v1/images/generations; editing is the same with
// a form body allowed. Billed per image: per_call × the size and quality
// factors of extra.image_factors, for each image returned, plus token usage
// when the upstream reports it and the model has token prices.
func imagesEndpoint(name, path string, edit bool) *endpoint {
	ep := &endpoint{
		name: name, path: path, dialect: protocol.OpenAI, form: edit, hostProtocol: "std_image",
		guard: []string{"prompt", "instruction"},
		// The images API has a default model; clients may leave it out.
		defaultModel: func(*Relay) string { return "dall-e-2" },
		validate:     func(c *epCall) error { return validateImage(&c.in, edit) },
		estimate:     func(c *epCall) charge { return c.imageCharge(c.requestedImages(), ir.Usage{}) },
		bill: func(c *epCall, body []byte) charge {
			n := c.requestedImages()
			if data := gjson.GetBytes(body, "data"); data.IsArray() && len(data.Array()) > 0 {
				n = len(data.Array())
			}
			u, _ := answerUsage(body)
			return c.imageCharge(n, u)
		},
	}
	if edit {
		ep.send = sendImageEdit
	}
	return ep
}

func validateImage(in *input, edit bool) error {
	if !in.has("prompt") && !(edit && in.has("instruction")) {
		return missingParam("prompt")
	}
	if n := in.str("n"); n != "" {
		if v, err := strconv.Atoi(n); err != nil || v < 1 || v > maxImages {
			return invalidParam("n", "must be an integer from 1 to "+strconv.Itoa(maxImages))
		}
	}
	if edit && in.form != nil && !in.form.hasFile("image") {
		return missingParam("image")
	}
	return nil
}

func (c *epCall) requestedImages() int {
	if n, err := strconv.Atoi(c.in.str("n")); err == nil && n > 0 {
		return min(n, maxImages)
	}
	return 1
}

func (c *epCall) imageCharge(n int, u ir.Usage) charge {
	size, quality := c.in.str("size"), c.in.str("quality")
	return charge{usage: u, usd: imageCost(c.price, n, size, quality),
		detail: map[string]any{"images": n, "size": size, "quality": quality}}
}

// sendImageEdit sends edits to /v1/images/edits; the legacy /v1/edits body
// names its text "instruction", which image editing calls "prompt".
func sendImageEdit(c *epCall, ctx context.Context, _ *routing.Channel, t upstream.Target) (*http.Request, func(), error) {
	var set map[string]any
	if c.in.form == nil && !c.in.has("prompt") {
		set = map[string]any{"prompt": c.in.str("instruction")}
	}
	return c.sendTo(ctx, t, "/v1/images/edits", set)
}

// audioTextEndpoint is POST /v1/audio/transcriptions or /translations: a
// multipart upload whose answer (json, text, srt, vtt or verbose_json) is
// passed through under the upstream's content type. Billed by duration at
// extra.per_minute when the answer states it (verbose_json's duration or a
// duration usage), else per_call; reported token usage is added at the
// token prices.
func audioTextEndpoint(name, path string) *endpoint {
	return &endpoint{
		name: name, path: path, dialect: protocol.OpenAI, form: true, formOnly: true,
		guard: []string{"prompt"},
		validate: func(c *epCall) error {
			if !c.in.form.hasFile("file") {
				return missingParam("file")
			}
			return nil
		},
		estimate: estimateAudioText,
		bill:     billAudioText,
	}
}

// estimateAudioText reserves per_call plus one minute: the duration is only
// known from the answer, and settling takes or returns the difference.
func estimateAudioText(c *epCall) charge {
	ch := charge{usd: c.price.CallCost(1)}
	if cost, ok := perMinuteCost(c.price, big.NewRat(60, 1)); ok {
		ch.usd.Add(ch.usd, cost)
	}
	return ch
}

func billAudioText(c *epCall, body []byte) charge {
	seconds := exactSeconds(gjson.GetBytes(body, "duration"))
	if seconds == nil && gjson.GetBytes(body, "usage.type").String() == "duration" {
		seconds = exactSeconds(gjson.GetBytes(body, "usage.seconds"))
	}
	ch := charge{detail: map[string]any{}}
	if seconds != nil {
		f, _ := seconds.Float64()
		ch.detail["duration_seconds"] = f
	}
	if u, ok := answerUsage(body); ok {
		ch.usage = u
	}
	if cost, ok := perMinuteCost(c.price, seconds); ok {
		ch.usd = cost
	} else {
		ch.usd = c.price.CallCost(1)
	}
	return ch
}

// speechEndpoint is POST /v1/audio/speech: the audio is streamed to the
// client as it arrives. Billed by characters (extra.per_million_chars) or
// by counted input tokens, plus per_call.
func speechEndpoint() *endpoint {
	return &endpoint{
		name: "audio_speech", path: "/v1/audio/speech", dialect: protocol.OpenAI,
		guard: []string{"input", "instructions"},
		validate: func(c *epCall) error {
			v := gjson.GetBytes(c.in.raw, "input")
			switch {
			case !v.Exists() || v.Type == gjson.Null:
				return missingParam("input")
			case v.Type != gjson.String || v.Str == "":
				return invalidParam("input", "must be a non-empty string")
			}
			return nil
		},
		estimate: func(c *epCall) charge { return speechCharge(c.price, c.model, c.in.str("input")) },
		bill:     func(c *epCall, _ []byte) charge { return speechCharge(c.price, c.model, c.in.str("input")) },
		relay:    relayBinary,
	}
}
