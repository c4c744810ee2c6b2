package relay

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// gatewayEpoch is the "created" time reported for models: the gateway does
// not know when a provider released them, and a stable value keeps lists
// diffable.
var gatewayEpoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Unix()

type openAIModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

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
	openai := rl.Codecs[protocol.OpenAI]
	p, err := rl.Keys.Authenticate(r.Context(), bearerKey(r))
	if err != nil {
		writeError(w, openai, ir.As(err))
		return
	}
	ids := rl.visibleModels(p)
	data := make([]openAIModel, len(ids))
	for i, id := range ids {
		data[i] = openAIModel{ID: id, Object: "model", Created: gatewayEpoch, OwnedBy: "turnpike"}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (rl *Relay) getModel(w http.ResponseWriter, r *http.Request) {
	openai := rl.Codecs[protocol.OpenAI]
	p, err := rl.Keys.Authenticate(r.Context(), bearerKey(r))
	if err != nil {
		writeError(w, openai, ir.As(err))
		return
	}
	id := r.PathValue("model")
	for _, m := range rl.visibleModels(p) {
		if m == id {
			writeJSON(w, http.StatusOK, openAIModel{ID: id, Object: "model", Created: gatewayEpoch, OwnedBy: "turnpike"})
			return
		}
	}
	writeError(w, openai, &ir.Error{Status: 404, Kind: ir.KindNotFound, Code: "model_not_found", Param: "model",
		Message: "the model " + id + " does not exist or is not available to this key"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
