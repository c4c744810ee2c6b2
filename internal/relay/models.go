package relay

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/protocol/anthropic"
	"github.com/turnpike-gw/turnpike/internal/protocol/gemini"
	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
)

// gatewayEpoch is the "created" time reported for models: the gateway does
// not know when a provider released them, and a stable value keeps lists
// diffable.
var gatewayEpoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// visibleModels lists the models the principal may call.
func (rl *Relay) visibleModels(p *auth.Principal) []string {
	all := rl.Router.Table().Models(p.Group)
	out := all[:0:0]
	for _, m := range all {
		if p.Allows(m) {
			out = append(out, m)
		}
	}
	return out
}

// listFormat picks the model-list dialect from the headers the client sent,
// as clients of each format expect their own shape from GET /v1/models.
func listFormat(r *http.Request) protocol.Format {
	switch {
	case r.Header.Get("x-goog-api-key") != "" || r.Header.Get("x-alt-api-key") != "" || r.URL.Query().Get("key") != "":
		return protocol.Gemini
	case versionHeader(r) != "" || r.Header.Get("x-api-key") != "":
		return protocol.Anthropic
	}
	return protocol.OpenAI
}

func keyFor(f protocol.Format) func(*http.Request) string {
	switch f {
	case protocol.Gemini:
		return altKey
	case protocol.Anthropic:
		return messagesKey
	}
	return bearerKey
}

// principal authenticates for a model-list call, answering errors itself.
func (rl *Relay) principal(w http.ResponseWriter, r *http.Request, f protocol.Format) (*auth.Principal, bool) {
	p, err := rl.Keys.Authenticate(r.Context(), keyFor(f)(r))
	if err != nil {
		writeError(w, rl.Codecs[f], ir.As(err))
		return nil, false
	}
	return p, true
}

func (rl *Relay) listModels(w http.ResponseWriter, r *http.Request) {
	f := listFormat(r)
	switch f {
	case protocol.Gemini:
		rl.listAltModels(w, r)
		return
	case protocol.Anthropic:
		p, ok := rl.principal(w, r, f)
		if ok {
			writeRaw(w, http.StatusOK, anthropic.EncodeModelList(rl.visibleModels(p), gatewayEpoch))
		}
		return
	}
	rl.listOpenAIModels(w, r)
}

func (rl *Relay) listOpenAIModels(w http.ResponseWriter, r *http.Request) {
	if p, ok := rl.principal(w, r, protocol.OpenAI); ok {
		writeRaw(w, http.StatusOK, openai.EncodeModelList(rl.visibleModels(p), "turnpike", gatewayEpoch.Unix()))
	}
}

func (rl *Relay) getModel(w http.ResponseWriter, r *http.Request) {
	f := listFormat(r)
	p, ok := rl.principal(w, r, f)
	if !ok {
		return
	}
	id := r.PathValue("model")
	if !rl.canSee(p, id) {
		writeError(w, rl.Codecs[f], openai.ModelNotFound(id))
		return
	}
	switch f {
	case protocol.Gemini:
		writeRaw(w, http.StatusOK, gemini.EncodeModel(gemini.ModelInfo{ID: id}))
	case protocol.Anthropic:
		writeJSONModel(w, id)
	default:
		writeRaw(w, http.StatusOK, openai.EncodeModel(id, "turnpike", gatewayEpoch.Unix()))
	}
}

func writeJSONModel(w http.ResponseWriter, id string) {
	body := anthropic.EncodeModelList([]string{id}, gatewayEpoch)
	// The single-model answer is the list entry itself.
	start, end := bytes.IndexByte(body, '['), bytes.LastIndexByte(body, ']')
	writeRaw(w, http.StatusOK, body[start+1:end])
}

func (rl *Relay) canSee(p *auth.Principal, id string) bool {
	for _, m := range rl.visibleModels(p) {
		if m == id {
			return true
		}
	}
	return false
}

// listAltModels answers the alternate-native list with working pagination.
func (rl *Relay) listAltModels(w http.ResponseWriter, r *http.Request) {
	p, ok := rl.principal(w, r, protocol.Gemini)
	if !ok {
		return
	}
	q := r.URL.Query()
	size := 50
	if s := q.Get("pageSize"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			writeError(w, rl.Codecs[protocol.Gemini], ir.BadRequest("invalid_page_size", "pageSize must be a non-negative integer"))
			return
		}
		if n > 0 {
			size = min(n, 1000)
		}
	}
	if tok, asked := q["pageToken"]; asked && len(tok) == 1 && tok[0] == "" {
		// A client that followed the last page's empty token is past the
		// end: an empty last page stops it instead of starting over.
		writeRaw(w, http.StatusOK, gemini.EncodeLastModelPage(nil))
		return
	}
	offset := 0
	if tok := q.Get("pageToken"); tok != "" {
		n, err := gemini.DecodePageToken(tok)
		if err != nil {
			writeError(w, rl.Codecs[protocol.Gemini], ir.BadRequest("invalid_page_token", "pageToken is not valid"))
			return
		}
		offset = n
	}
	ids := rl.visibleModels(p)
	offset = min(offset, len(ids))
	end := min(offset+size, len(ids))
	infos := make([]gemini.ModelInfo, 0, end-offset)
	for _, id := range ids[offset:end] {
		infos = append(infos, gemini.ModelInfo{ID: id})
	}
	next := ""
	if end < len(ids) {
		next = gemini.EncodePageToken(end)
	}
	if next == "" && gemini.FromGoogleClient(r.Header) {
		// The official clients page on until the token is absent, as
		// Google's API leaves it out; everyone else gets SPEC's empty token.
		writeRaw(w, http.StatusOK, gemini.EncodeLastModelPage(infos))
		return
	}
	writeRaw(w, http.StatusOK, gemini.EncodeModelList(infos, next))
}

func (rl *Relay) getAltModel(w http.ResponseWriter, r *http.Request) {
	p, ok := rl.principal(w, r, protocol.Gemini)
	if !ok {
		return
	}
	id := gemini.StripModelPrefix(r.PathValue("model"))
	if !rl.canSee(p, id) {
		writeError(w, rl.Codecs[protocol.Gemini], &ir.Error{Status: 404, Kind: ir.KindNotFound, Code: "model_not_found",
			Message: "model " + id + " is not found or not available to this key"})
		return
	}
	writeRaw(w, http.StatusOK, gemini.EncodeModel(gemini.ModelInfo{ID: id}))
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
