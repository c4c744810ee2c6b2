package task

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
)

// maxIDsPerQuery bounds GET /v1/tasks?ids=.
const maxIDsPerQuery = 100

// Register mounts GET /v1/tasks, GET /v1/tasks/{id}, the signed artifact
// addresses (GET and HEAD), GET /api/tasks and the std_video endpoints.
func (s *Service) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/tasks/{id}", s.getTask)
	mux.HandleFunc("GET /v1/tasks/{id}/artifacts/{key}", s.getArtifact)
	mux.HandleFunc("GET /v1/tasks", s.listTasks)
	mux.HandleFunc("GET /api/tasks", s.adminTasks)
	s.registerVideo(mux)
}

// publicTask is the CONTRACT §8 shape of one task.
func publicTask(t *Task) map[string]any {
	return map[string]any{"task_id": t.PublicID, "platform": t.PluginKey, "model": t.Model, "status": t.Status,
		"progress": t.Progress, "fail_reason": t.FailReason, "created_at": seconds(t.CreatedAt),
		"updated_at": seconds(t.UpdatedAt), "finished_at": seconds(t.FinishedAt), "data": rawOrNil(t.Data)}
}

func (s *Service) getTask(w http.ResponseWriter, r *http.Request) {
	p, err := s.authenticate(r)
	if err != nil {
		writeOpenAIError(w, ir.As(err))
		return
	}
	t, err := s.ownTask(r.Context(), p, r.PathValue("id"), "")
	if err != nil {
		writeOpenAIError(w, ir.As(err))
		return
	}
	writeJSON(w, http.StatusOK, publicTask(t))
}

func (s *Service) listTasks(w http.ResponseWriter, r *http.Request) {
	p, err := s.authenticate(r)
	if err != nil {
		writeOpenAIError(w, ir.As(err))
		return
	}
	items, err := s.tasksOf(r.Context(), p, r)
	if err != nil {
		writeOpenAIError(w, ir.As(err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": items})
}

// tasksOf lists the caller's tasks named by ?ids=a,b (unknown and foreign
// ids are left out), or the caller's newest tasks.
func (s *Service) tasksOf(ctx context.Context, p *auth.Principal, r *http.Request) ([]any, error) {
	items := []any{}
	raw := strings.TrimSpace(r.URL.Query().Get("ids"))
	if raw == "" {
		page := pageOf(r)
		if pageTooLarge(page) {
			return nil, ir.BadRequest("invalid_request", "page must be at most 1000000")
		}
		ts, _, err := s.store.List(ctx, Filter{UserID: p.UserID}, page)
		for _, t := range ts {
			if t.RetainResult || !terminal(t.Status) {
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
	ts, err := s.store.GetPublicMany(ctx, ids)
	if err != nil {
		return nil, err
	}
	byID := map[string]*Task{}
	for _, t := range ts {
		if t.UserID == p.UserID && (t.RetainResult || !terminal(t.Status)) {
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
func adminTask(t *Task) map[string]any {
	m := publicTask(t)
	m["id"] = t.ID
	m["action"] = t.Action
	m["upstream_model"] = t.UpstreamModel
	m["user_id"] = t.UserID
	m["token_id"] = t.TokenID
	m["channel_id"] = t.ChannelID
	m["quota"] = t.QuotaReserved
	if t.BillingStatus == BillingSettled {
		m["quota"] = t.QuotaCharged
	}
	m["billing_status"] = t.BillingStatus
	m["submitted_at"] = seconds(t.SubmittedAt)
	m["result_url"] = t.ResultURL
	return m
}

// adminTasks lists tasks for the console: users see their own, admins and
// root everyone's. Errors use the /api envelope.
func (s *Service) adminTasks(w http.ResponseWriter, r *http.Request) {
	p, err := s.apiPrincipal(r)
	if err != nil {
		s.log.Warn("session check failed", "err", err)
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
	f := Filter{Status: q.Get("status"), Platform: q.Get("platform"), Model: q.Get("model")}
	if f.Status != "" && !slices.Contains(knownStatuses, f.Status) {
		writeAPIError(w, http.StatusBadRequest, "invalid_status",
			"status must be one of "+strings.Join(knownStatuses, ", "))
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
	ts, total, err := s.store.List(r.Context(), f, page)
	if err != nil {
		s.log.Error("listing tasks failed", "err", err)
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
func (s *Service) apiPrincipal(r *http.Request) (*auth.Principal, error) {
	if s.d.APIPrincipal != nil {
		return s.d.APIPrincipal(r)
	}
	if s.d.RootToken != "" {
		if tok := auth.BearerToken(r); tok != "" && auth.Equal(tok, s.d.RootToken) {
			return &auth.Principal{Username: store.RoleRoot, Role: store.RoleRoot}, nil
		}
	}
	return nil, nil
}

func writeAPIError(w http.ResponseWriter, status int, code, msg string) {
	apijson.WriteError(w, status, apijson.Error{Code: code, Message: msg})
}
