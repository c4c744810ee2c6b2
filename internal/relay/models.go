package relay

import (
	"net/http"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
)

// gatewayEpoch is the "created" time reported for models: the gateway does
// not know when a provider released them, and a stable value keeps lists
// diffable.
var gatewayEpoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Unix()

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

func (rl *Relay) listModels(w http.ResponseWriter, r *http.Request) {
	codec := rl.Codecs[protocol.OpenAI]
	p, err := rl.Keys.Authenticate(r.Context(), bearerKey(r))
	if err != nil {
		writeError(w, codec, ir.As(err))
		return
	}
	writeRaw(w, http.StatusOK, openai.EncodeModelList(rl.visibleModels(p), "turnpike", gatewayEpoch))
}

func (rl *Relay) getModel(w http.ResponseWriter, r *http.Request) {
	codec := rl.Codecs[protocol.OpenAI]
	p, err := rl.Keys.Authenticate(r.Context(), bearerKey(r))
	if err != nil {
		writeError(w, codec, ir.As(err))
		return
	}
	id := r.PathValue("model")
	for _, m := range rl.visibleModels(p) {
		if m == id {
			writeRaw(w, http.StatusOK, openai.EncodeModel(id, "turnpike", gatewayEpoch))
			return
		}
	}
	writeError(w, codec, openai.ModelNotFound(id))
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
