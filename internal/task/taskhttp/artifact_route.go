package taskhttp

import (
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/task"
)

// getArtifact serves GET and HEAD /v1/tasks/{id}/artifacts/{key}. The
// signature is the credential, so no API key is needed: the address was
// handed to the task's owner and works on any node sharing the secret.
func (h *Handlers) getArtifact(w http.ResponseWriter, r *http.Request) {
	id, key := r.PathValue("id"), r.PathValue("key")
	q := r.URL.Query()
	if err := h.core.CheckArtifactAddress(id, key, q.Get("exp"), q.Get("sig")); err != nil {
		writeOpenAIError(w, &ir.Error{Status: http.StatusForbidden, Kind: ir.KindPermission, Code: "invalid_signature", Message: err.Error()})
		return
	}
	t, err := h.core.Store().GetPublic(r.Context(), id)
	if err != nil || t.Discarded() {
		writeOpenAIError(w, task.TaskNotFound(id))
		return
	}
	h.serveArtifact(w, r, t, key)
}

// serveArtifact streams one artifact's content to the client, or words
// why it cannot in the OpenAI dialect.
func (h *Handlers) serveArtifact(w http.ResponseWriter, r *http.Request, t *task.Task, key string) {
	if err := h.core.StreamArtifact(w, r, t, key); err != nil {
		e := ir.As(err)
		if e.Status >= 500 {
			h.log.Warn("artifact content failed", "task", t.PublicID, "artifact", key, "code", e.Code, "err", err)
		}
		writeOpenAIError(w, e)
	}
}
