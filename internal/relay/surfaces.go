package relay

import (
	"net/http"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// messagesKey takes the key from x-api-key or, as current official clients
// send it, a Bearer token.
func messagesKey(r *http.Request) string {
	if k := r.Header.Get("x-api-key"); k != "" {
		return k
	}
	return auth.BearerToken(r)
}

// altKey takes the alternate-native key from ?key=, either spelling of the
// key header, or a Bearer token.
func altKey(r *http.Request) string {
	if k := r.URL.Query().Get("key"); k != "" {
		return k
	}
	for _, h := range []string{"x-goog-api-key", "x-alt-api-key"} {
		if k := r.Header.Get(h); k != "" {
			return k
		}
	}
	return auth.BearerToken(r)
}

// versionHeader returns the messages version the client sent, under either
// spelling; its value is never checked against a list.
func versionHeader(r *http.Request) string {
	if v := r.Header.Get("anthropic-version"); v != "" {
		return v
	}
	return r.Header.Get("provider-version")
}

func (rl *Relay) messagesHandler() http.Handler {
	sf := surface{codec: rl.Codecs[protocol.Anthropic], key: messagesKey}
	inner := rl.chatHandler(sf)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if versionHeader(r) == "" {
			writeError(w, sf.codec, &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "missing_version",
				Message: "the anthropic-version (provider-version) header is required"})
			return
		}
		inner.ServeHTTP(w, r)
	})
}

// altInvoke serves POST /v1beta/models/{model}:{action} (and the /v1 alias).
func (rl *Relay) altInvoke(w http.ResponseWriter, r *http.Request) {
	codec := rl.Codecs[protocol.Gemini]
	target := r.PathValue("call")
	i := strings.LastIndexByte(target, ':')
	if i <= 0 {
		writeError(w, codec, &ir.Error{Status: 404, Kind: ir.KindNotFound, Code: "not_found",
			Message: "expected models/{model}:{action}"})
		return
	}
	model, action := codec.ModelID(target[:i]), target[i+1:]
	sf := surface{codec: codec, key: altKey, model: model}
	switch action {
	case "generateContent":
	case "streamGenerateContent":
		sf.stream = true
		sf.jsonArrayStream = r.URL.Query().Get("alt") != "sse"
	case "countTokens":
		rl.countTokens(w, r, model)
		return
	default:
		if h, ok := rl.altActions[action]; ok {
			h(w, r, model)
			return
		}
		writeError(w, codec, &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "unsupported_action",
			Message: "action " + action + " is not supported"})
		return
	}
	rl.chatHandler(sf).ServeHTTP(w, r)
}

// countTokens answers :countTokens locally with the gateway's tokenizer,
// after the same authentication and model check as every call; it is free
// and touches no channel.
func (rl *Relay) countTokens(w http.ResponseWriter, r *http.Request, model string) {
	c := newCore(rl, w, r, "count_tokens", protocol.Gemini)
	raw, err := c.admitCount(altKey, func([]byte) (string, error) { return model, nil })
	if err != nil {
		c.fail(err)
		return
	}
	req, err := rl.TokenCounter.DecodeCountTokens(raw)
	if err == nil {
		err = c.checkModel()
	}
	if err != nil {
		c.fail(err)
		return
	}
	n := max(countPrompt(model, req)-3, 0) // the reply primer is not part of the prompt here
	writeRaw(w, http.StatusOK, rl.TokenCounter.EncodeCountTokens(n))
}
