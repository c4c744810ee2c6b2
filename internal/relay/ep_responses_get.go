package relay

import (
	"context"
	"net/http"
	"net/url"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// responseRetrieve serves GET /v1/responses/{id}: a plugin task's response
// through the plugin host, else a stored response through the channel that
// created it.
func (rl *Relay) responseRetrieve(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if rl.Hosts != nil && rl.Hosts.ServeResponse(w, r, id) {
		return
	}
	rl.forwardStoredResponse(w, r, "")
}

// responseAction serves the other calls on a stored response (delete,
// cancel, input items) through the channel that created it.
func (rl *Relay) responseAction(suffix string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { rl.forwardStoredResponse(w, r, suffix) }
}

// forwardStoredResponse relays a call on a stored response to its channel.
// Ids the caller does not own answer 404 exactly like unknown ones, so ids
// of other users cannot be probed.
func (rl *Relay) forwardStoredResponse(w http.ResponseWriter, r *http.Request, suffix string) {
	codec := rl.Codecs[protocol.OpenAI]
	id := r.PathValue("id")
	p, err := rl.Keys.Authenticate(r.Context(), bearerKey(r))
	if err != nil {
		writeError(w, codec, ir.As(err))
		return
	}
	notFound := &ir.Error{Status: 404, Kind: ir.KindInvalidRequest, Code: "not_found", Param: "response_id",
		Message: "Response with id '" + id + "' not found."}
	if rl.Responses == nil {
		writeError(w, codec, notFound)
		return
	}
	chID, owner, ok := rl.Responses.Lookup(r.Context(), id)
	ch := rl.Router.Table().Channel(chID)
	if !ok || owner != p.UserID || ch == nil {
		writeError(w, codec, notFound)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), rl.Options.UpstreamTimeout)
	defer cancel()
	path := "/v1/responses/" + url.PathEscape(id) + suffix
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	var raw []byte
	if r.Method == http.MethodPost {
		var e *ir.Error
		if raw, e = readLimited(w, r, rl.Options.BodyLimit); e != nil {
			writeError(w, codec, e)
			return
		}
	}
	if r.Method == http.MethodDelete && suffix == "" {
		// Deleting a background response that is still followed would
		// leave its follower nothing to read: it is settled first.
		rl.settleBeforeDelete(ctx, id)
	}
	resp, err := rl.storedCallAnyKey(ctx, ch, r.Method, path, raw, r.Header.Get("Content-Type"))
	if err != nil {
		writeError(w, codec, ir.As(err))
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		e := ir.As(upstreamError(codec, resp))
		if e.Status == 401 || e.Status == 403 {
			e = afterRetries(e)
		}
		writeError(w, codec, e)
		return
	}
	if isEventStream(resp) {
		rl.relayStoredStream(w, r, ch, id, resp)
		return
	}
	body, err := readAnswer(resp)
	if err != nil {
		writeError(w, codec, ir.As(err))
		return
	}
	if r.Method == http.MethodGet && suffix == "" {
		// A plain retrieval may be the end of a background response whose
		// hold is still open: settle it from this answer.
		rl.observeResponse(id, body)
	}
	writeRaw(w, resp.StatusCode, body)
}

// registerResponses mounts the Responses API and the realtime socket.
func (rl *Relay) registerResponses(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/responses", rl.responsesCreate)
	mux.HandleFunc("POST /v1/responses/compact", rl.responsesCompact)
	mux.HandleFunc("GET /v1/responses/{id}", rl.responseRetrieve)
	mux.HandleFunc("DELETE /v1/responses/{id}", rl.responseAction(""))
	mux.HandleFunc("POST /v1/responses/{id}/cancel", rl.responseAction("/cancel"))
	mux.HandleFunc("GET /v1/responses/{id}/input_items", rl.responseAction("/input_items"))
	mux.HandleFunc("GET /v1/realtime", rl.serveRealtime)
}
