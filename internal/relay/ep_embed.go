package relay

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// embeddingsEndpoint is POST /v1/embeddings (and the engines path, whose
// model comes from the URL). OpenAI-compatible channels get the body as it
// is; alternate-native (Gemini) channels get a batchEmbedContents call whose
// answer is converted back. Billed by input tokens.
func embeddingsEndpoint() *endpoint {
	return &endpoint{
		name: "embeddings", path: "/v1/embeddings", dialect: protocol.OpenAI,
		guard:    []string{"input"},
		validate: validateEmbeddingInput,
		filter:   embedCapable,
		estimate: func(c *epCall) charge { return tokensPlusCall(c.price, ir.Usage{InputTokens: c.embedTokens()}) },
		bill: func(c *epCall, body []byte) charge {
			u, ok := answerUsage(body)
			if !ok {
				u = ir.Usage{InputTokens: c.embedTokens()}
			}
			return tokensPlusCall(c.price, u)
		},
		send: func(c *epCall, ctx context.Context, ch *routing.Channel, t upstream.Target) (*http.Request, func(), error) {
			if e := c.rl.nativeEmbedder(ch); e != nil {
				return c.sendNativeEmbed(ctx, e, t)
			}
			return c.sendTo(ctx, t, "/v1/embeddings", nil)
		},
		relay: func(c *epCall, ch *routing.Channel, resp *http.Response) error {
			if e := c.rl.nativeEmbedder(ch); e != nil {
				return c.relayNativeAsOpenAI(e, resp)
			}
			return relayPassthrough(c, ch, resp)
		},
	}
}

// embedCapable keeps channels with OpenAI-style embeddings or embeddings
// on their provider's own wire.
func embedCapable(rl *Relay, ch *routing.Channel) bool {
	if rl.servesPath(ch, "/v1/embeddings") {
		return true
	}
	a, ok := rl.adapters(ch.Type)
	if !ok {
		return false
	}
	_, ok = a.(upstream.Embedder)
	return ok
}

func validateEmbeddingInput(c *epCall) error {
	v := gjson.GetBytes(c.in.raw, "input")
	switch {
	case !v.Exists() || v.Type == gjson.Null:
		return missingParam("input")
	case v.Type == gjson.String:
		if v.Str == "" {
			return invalidParam("input", "must not be empty")
		}
	case v.IsArray():
		if len(v.Array()) == 0 {
			return invalidParam("input", "must not be an empty array")
		}
	default:
		return invalidParam("input", "must be a string or an array")
	}
	return nil
}

func (c *epCall) embedTokens() int {
	if c.texts != nil {
		n := 0
		for _, t := range c.texts {
			n += countTexts(c.model, gjson.Result{Type: gjson.String, Str: t})
		}
		return n
	}
	return countTexts(c.model, gjson.GetBytes(c.in.raw, "input"))
}

// inputTexts returns the input as texts; token-id input cannot be sent to a
// provider with another tokenizer.
func inputTexts(raw []byte) ([]string, error) {
	v := gjson.GetBytes(raw, "input")
	if v.Type == gjson.String {
		return []string{v.Str}, nil
	}
	var out []string
	for _, e := range v.Array() {
		if e.Type != gjson.String {
			return nil, invalidParam("input", "must be text (not token ids) for this model's channel")
		}
		out = append(out, e.Str)
	}
	return out, nil
}

// nativeEmbedder is the channel's own embedding wire when its provider has
// no OpenAI-style /v1/embeddings (Gemini, Cohere, Vertex AI); nil otherwise.
func (rl *Relay) nativeEmbedder(ch *routing.Channel) upstream.Embedder {
	if rl.servesPath(ch, "/v1/embeddings") {
		return nil
	}
	a, _ := rl.adapters(ch.Type)
	e, _ := a.(upstream.Embedder)
	return e
}

// sendNativeEmbed converts an OpenAI embeddings call to the provider's own
// embedding call.
func (c *epCall) sendNativeEmbed(ctx context.Context, e upstream.Embedder, t upstream.Target) (*http.Request, func(), error) {
	texts, dims := c.texts, c.dims
	if texts == nil {
		var err error
		if texts, err = inputTexts(c.in.raw); err != nil {
			return nil, nil, err
		}
		if d := gjson.GetBytes(c.in.raw, "dimensions"); d.Type == gjson.Number && d.Int() > 0 {
			dims = int(d.Int())
		}
	}
	req, err := e.EmbedRequest(ctx, t, texts, dims)
	if err != nil {
		return nil, nil, adapterFailed(err)
	}
	return req, func() {}, nil
}

// nativeVectors reads a provider's own embedding answer; input the
// provider did not count is counted here.
func (c *epCall) nativeVectors(e upstream.Embedder, resp *http.Response) ([][]float64, ir.Usage, error) {
	body, err := readAnswer(resp)
	if err != nil {
		return nil, ir.Usage{}, err
	}
	vecs, u, err := e.DecodeEmbeddings(body)
	if err != nil {
		return nil, u, badEmbedAnswer(err)
	}
	if u.InputTokens == 0 {
		u = ir.Usage{InputTokens: c.embedTokens()}
	}
	return vecs, u, nil
}

func badEmbedAnswer(err error) error {
	return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "bad_upstream_response", Message: "the upstream embedding answer could not be understood", Retry: ir.RetryNext, Cause: err}
}

// relayNativeAsOpenAI renders a provider's own embedding answer as an
// OpenAI list, in base64 when the client asked for it (the official Python
// client does by default).
func (c *epCall) relayNativeAsOpenAI(e upstream.Embedder, resp *http.Response) error {
	vecs, u, err := c.nativeVectors(e, resp)
	if err != nil {
		return err
	}
	b64 := gjson.GetBytes(c.in.raw, "encoding_format").String() == "base64"
	c.answer("application/json", encodeOpenAIEmbeddings(vecs, c.model, u.InputTokens, b64), tokensPlusCall(c.price, u))
	return nil
}

func encodeOpenAIEmbeddings(vecs [][]float64, model string, tokens int, b64 bool) []byte {
	b := []byte(`{"object":"list","data":[`)
	for i, v := range vecs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"object":"embedding","index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"embedding":`...)
		if b64 {
			b = strconv.AppendQuote(b, float32Base64(v))
		} else {
			b = appendFloats(b, v)
		}
		b = append(b, '}')
	}
	b = append(b, `],"model":`...)
	b = strconv.AppendQuote(b, model)
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(tokens), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(tokens), 10)
	return append(b, "}}"...)
}

func appendFloats(b []byte, v []float64) []byte {
	b = append(b, '[')
	for i, f := range v {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = 0
		}
		b = strconv.AppendFloat(b, f, 'g', -1, 64)
	}
	return append(b, ']')
}

// float32Base64 is the OpenAI base64 encoding: little-endian float32s.
func float32Base64(v []float64) string {
	buf := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(float32(f)))
	}
	return base64.StdEncoding.EncodeToString(buf)
}

// altEmbedEndpoint serves the alternate-native :embedContent and
// :batchEmbedContents actions: Gemini channels get the body as it is (model
// mapped), OpenAI-compatible channels an /v1/embeddings call converted back.
func altEmbedEndpoint(action string) *endpoint {
	single := action == "embedContent"
	return &endpoint{
		name: "embeddings", path: "/v1/embeddings", dialect: protocol.Gemini,
		guard: []string{"content", "requests"},
		validate: func(c *epCall) (err error) {
			c.texts, c.dims, err = c.rl.Embedder.DecodeEmbedRequest(c.in.raw, single)
			return err
		},
		filter:   embedCapable,
		estimate: func(c *epCall) charge { return tokensPlusCall(c.price, ir.Usage{InputTokens: c.embedTokens()}) },
		bill: func(c *epCall, _ []byte) charge {
			return tokensPlusCall(c.price, ir.Usage{InputTokens: c.embedTokens()})
		},
		send: func(c *epCall, ctx context.Context, ch *routing.Channel, t upstream.Target) (*http.Request, func(), error) {
			if g, ok := c.rl.geminiNative(ch); ok {
				req, err := g.Action(ctx, t, action, c.rl.Embedder.EmbedPassthrough(c.in.raw, t.Model))
				if err != nil {
					return nil, nil, adapterFailed(err)
				}
				return req, func() {}, nil
			}
			if e := c.rl.nativeEmbedder(ch); e != nil {
				return c.sendNativeEmbed(ctx, e, t)
			}
			return c.sendOpenAIEmbed(ctx, t)
		},
		relay: func(c *epCall, ch *routing.Channel, resp *http.Response) error {
			if _, ok := c.rl.geminiNative(ch); ok {
				return relayPassthrough(c, ch, resp)
			}
			if e := c.rl.nativeEmbedder(ch); e != nil {
				vecs, u, err := c.nativeVectors(e, resp)
				if err != nil {
					return err
				}
				c.answer("application/json", c.rl.Embedder.EncodeEmbedResponse(vecs, single), tokensPlusCall(c.price, u))
				return nil
			}
			return c.relayOpenAIAsGemini(resp, single)
		},
	}
}

func (c *epCall) sendOpenAIEmbed(ctx context.Context, t upstream.Target) (*http.Request, func(), error) {
	req := map[string]any{"model": t.Model, "input": c.texts, "encoding_format": "float"}
	if c.dims > 0 {
		req["dimensions"] = c.dims
	}
	body, _ := json.Marshal(req)
	r, err := c.rl.endpoint(ctx, t, http.MethodPost, "/v1/embeddings", bytes.NewReader(body), "application/json")
	if err != nil {
		return nil, nil, err
	}
	return r, func() {}, nil
}

// relayOpenAIAsGemini renders an OpenAI embeddings answer in the
// alternate-native shape, vectors in input order.
func (c *epCall) relayOpenAIAsGemini(resp *http.Response, single bool) error {
	body, err := readAnswer(resp)
	if err != nil {
		return err
	}
	var w struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return badEmbedAnswer(err)
	}
	if len(w.Data) != len(c.texts) {
		return badEmbedAnswer(errors.New("the answer has " + strconv.Itoa(len(w.Data)) + " vectors for " + strconv.Itoa(len(c.texts)) + " inputs"))
	}
	vecs := make([][]float64, len(c.texts))
	for i, d := range w.Data {
		idx := d.Index
		if idx < 0 || idx >= len(vecs) || vecs[idx] != nil {
			idx = i
		}
		if idx < len(vecs) {
			vecs[idx] = d.Embedding
		}
	}
	u, ok := answerUsage(body)
	if !ok {
		u = ir.Usage{InputTokens: c.embedTokens()}
	}
	c.answer("application/json", c.rl.Embedder.EncodeEmbedResponse(vecs, single), tokensPlusCall(c.price, u))
	return nil
}

// geminiNative is the channel's Gemini API adapter, which takes the
// alternate-native embedding bodies as they are.
func (rl *Relay) geminiNative(ch *routing.Channel) (upstream.Gemini, bool) {
	a, _ := rl.adapters(ch.Type)
	g, ok := a.(upstream.Gemini)
	return g, ok
}
