package taskhttp

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/apijson"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/task"
)

// maxIDsPerQuery bounds GET /v1/tasks?ids=.
const maxIDsPerQuery = 100

// Register mounts GET /v1/tasks, GET /v1/tasks/{id}, the signed artifact
// addresses (GET and HEAD), GET /api/tasks and the std_video endpoints.
func (h *Handlers) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/tasks/{id}", h.getTask)
	mux.HandleFunc("GET /v1/tasks/{id}/artifacts/{key}", h.getArtifact)
	mux.HandleFunc("GET /v1/tasks", h.listTasks)
	mux.HandleFunc("GET /api/tasks", h.adminTasks)
	h.registerVideo(mux)
}

// publicTask is the CONTRACT §8 shape of one task: the render view without
// the model properties and the result address.
func publicTask(t *task.Task) map[string]any {
	v := t.View()
	delete(v, "properties")
	delete(v, "result_url")
	return v
}

// seconds is a stored Unix-millisecond time as the Unix seconds the wire
// carries.
func seconds(ms int64) int64 { return ms / 1000 }

func (h *Handlers) getTask(w http.ResponseWriter, r *http.Request) {
	p, err := h.authenticate(r)
	if err != nil {
		writeOpenAIError(w, ir.As(err))
		return
	}
	t, err := h.core.OwnTask(r.Context(), p, r.PathValue("id"), "")
	if err != nil {
		writeOpenAIError(w, ir.As(err))
		return
	}
	writeJSON(w, http.StatusOK, publicTask(t))
}

func (h *Handlers) listTasks(w http.ResponseWriter, r *http.Request) {
	p, err := h.authenticate(r)
	if err != nil {
		writeOpenAIError(w, ir.As(err))
		return
	}
	items, err := h.tasksOf(r.Context(), p, r)
	if err != nil {
		writeOpenAIError(w, ir.As(err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": items})
}

// tasksOf lists the caller's tasks named by ?ids=a,b (unknown and foreign
// ids are left out), or the caller's newest tasks.
func (h *Handlers) tasksOf(ctx context.Context, p *auth.Principal, r *http.Request) ([]any, error) {
	items := []any{}
	raw := strings.TrimSpace(r.URL.Query().Get("ids"))
	if raw == "" {
		page := pageOf(r)
		if pageTooLarge(page) {
			return nil, ir.BadRequest("invalid_request", "page must be at most 1000000")
		}
		ts, _, err := h.core.Store().List(ctx, task.Filter{UserID: p.UserID}, page)
		for _, t := range ts {
			if !t.Discarded() {
				items = append(items, publicTask(t))
			}
		}
		return items, err
	}
	ids := strings.Split(raw, ",")
	if len(ids) > maxIDsPerQuery {
		return nil, ir.BadRequest("invalid_request", "at most %d ids per request", maxIDsPerQuery)
	}
	for i := range ids {
		ids[i] = strings.TrimSpace(ids[i])
	}
	ts, err := h.core.Store().GetPublicMany(ctx, ids)
	if err != nil {
		return nil, err
	}
	byID := map[string]*task.Task{}
	for _, t := range ts {
		if t.UserID == p.UserID && !t.Discarded() {
			byID[t.PublicID] = t
		}
	}
	for _, id := range ids {
		if t, ok := byID[id]; ok {
			items = append(items, publicTask(t))
			delete(byID, id)
		}
	}
	return items, nil
}

func pageOf(r *http.Request) store.Page {
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	size, _ := strconv.Atoi(r.URL.Query().Get("page_size"))
	return store.Page{Page: page, PageSize: size}
}

// maxPage keeps the listing's OFFSET from wrapping around.
const maxPage = 1_000_000

func pageTooLarge(p store.Page) bool { return p.Page > maxPage }

// adminTask is one item of GET /api/tasks.
func adminTask(t *task.Task) map[string]any {
	m := publicTask(t)
	m["id"] = t.ID
	m["action"] = t.Action
	m["upstream_model"] = t.UpstreamModel
	m["user_id"] = t.UserID
	m["token_id"] = t.TokenID
	m["channel_id"] = t.ChannelID
	m["quota"] = t.QuotaReserved
	if t.BillingStatus == task.BillingSettled {
		m["quota"] = t.QuotaCharged
	}
	m["billing_status"] = t.BillingStatus
	m["submitted_at"] = seconds(t.SubmittedAt)
	m["result_url"] = t.ResultURL
	return m
}

// adminTasks lists tasks for the console: users see their own, admins and
// root everyone's. Errors use the /api envelope.
func (h *Handlers) adminTasks(w http.ResponseWriter, r *http.Request) {
	p, err := h.apiPrincipal(r)
	if err != nil {
		h.log.Warn("session check failed", "err", err)
		if store.Unavailable(err) {
			writeAPIError(w, http.StatusServiceUnavailable, "store_unavailable", "the database does not answer; try again shortly")
		} else {
			writeAPIError(w, http.StatusInternalServerError, "internal_error", "the request could not be completed; see the server log")
		}
		return
	}
	if p == nil {
		writeAPIError(w, http.StatusUnauthorized, "unauthorized", "sign in, or send the root token as a Bearer token")
		return
	}
	q := r.URL.Query()
	f := task.Filter{Status: q.Get("status"), Platform: q.Get("platform"), Model: q.Get("model")}
	if statuses := task.Statuses(); f.Status != "" && !slices.Contains(statuses, f.Status) {
		writeAPIError(w, http.StatusBadRequest, "invalid_status",
			"status must be one of "+strings.Join(statuses, ", "))
		return
	}
	if !p.AtLeast(store.RoleAdmin) {
		f.UserID = p.UserID
	} else if uid, err := strconv.ParseInt(q.Get("user_id"), 10, 64); err == nil {
		f.UserID = uid
	}
	page := pageOf(r)
	if pageTooLarge(page) {
		writeAPIError(w, http.StatusBadRequest, "invalid_request", "page must be at most 1000000")
		return
	}
	ts, total, err := h.core.Store().List(r.Context(), f, page)
	if err != nil {
		h.log.Error("listing tasks failed", "err", err)
		if store.Unavailable(err) {
			writeAPIError(w, http.StatusServiceUnavailable, "store_unavailable", "the database does not answer; try again shortly")
			return
		}
		writeAPIError(w, http.StatusInternalServerError, "internal_error", "the request could not be completed; see the server log")
		return
	}
	items := make([]any, 0, len(ts))
	for _, t := range ts {
		items = append(items, adminTask(t))
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": total})
}

// apiPrincipal authenticates /api like the admin API: nil for an
// anonymous caller, an error when the session could not be checked.
func (h *Handlers) apiPrincipal(r *http.Request) (*auth.Principal, error) {
	if h.d.APIPrincipal != nil {
		return h.d.APIPrincipal(r)
	}
	if h.d.RootToken != "" {
		if tok := auth.BearerToken(r); tok != "" && auth.Equal(tok, h.d.RootToken) {
			return &auth.Principal{Username: store.RoleRoot, Role: store.RoleRoot}, nil
		}
	}
	return nil, nil
}

func writeAPIError(w http.ResponseWriter, status int, code, msg string) {
	apijson.WriteError(w, status, apijson.Error{Code: code, Message: msg})
}
