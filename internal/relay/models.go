package relay

import (
	"net/http"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// modelAbout is what every model list says of each model: the gateway owns
// them, and as it does not know when a provider released one, a stable
// "created" time keeps lists diffable.
var modelAbout = protocol.ModelAbout{Owner: "turnpike", Created: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}

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
	rl.listModelsIn(w, r, listFormat(r))
}

func (rl *Relay) listOpenAIModels(w http.ResponseWriter, r *http.Request) {
	rl.listModelsIn(w, r, protocol.OpenAI)
}

// listAltModels answers the alternate-native list, which pages.
func (rl *Relay) listAltModels(w http.ResponseWriter, r *http.Request) {
	rl.listModelsIn(w, r, protocol.Gemini)
}

// listModelsIn answers a model list in format f's shape.
func (rl *Relay) listModelsIn(w http.ResponseWriter, r *http.Request, f protocol.Format) {
	p, ok := rl.principal(w, r, f)
	if !ok {
		return
	}
	codec := rl.Codecs[f]
	body, err := codec.ListModels(rl.visibleModels(p), modelAbout, r.URL.Query(), r.Header)
	if err != nil {
		writeError(w, codec, ir.As(err))
		return
	}
	writeRaw(w, http.StatusOK, body)
}

func (rl *Relay) getModel(w http.ResponseWriter, r *http.Request) {
	f := listFormat(r)
	p, ok := rl.principal(w, r, f)
	if !ok {
		return
	}
	id := r.PathValue("model")
	if !rl.canSee(p, id) {
		writeError(w, rl.Codecs[f], protocol.ModelNotFound(id))
		return
	}
	writeRaw(w, http.StatusOK, rl.Codecs[f].DescribeModel(id, modelAbout))
}

func (rl *Relay) canSee(p *auth.Principal, id string) bool {
	for _, m := range rl.visibleModels(p) {
		if m == id {
			return true
		}
	}
	return false
}

func (rl *Relay) getAltModel(w http.ResponseWriter, r *http.Request) {
	p, ok := rl.principal(w, r, protocol.Gemini)
	if !ok {
		return
	}
	codec := rl.Codecs[protocol.Gemini]
	id := codec.ModelID(r.PathValue("model"))
	if !rl.canSee(p, id) {
		writeError(w, codec, &ir.Error{Status: 404, Kind: ir.KindNotFound, Code: "model_not_found",
			Message: "model " + id + " is not found or not available to this key"})
		return
	}
	writeRaw(w, http.StatusOK, codec.DescribeModel(id, modelAbout))
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
