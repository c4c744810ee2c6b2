package taskhttp

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestAdminTaskListRejectsAnUnknownStatus(t *testing.T) {
	s := &Handlers{}
	s.d.APIPrincipal = func(*http.Request) (*auth.Principal, error) {
		return &auth.Principal{Username: "root", Role: store.RoleRoot}, nil
	}
	w := httptest.NewRecorder()
	s.adminTasks(w, httptest.NewRequest(http.MethodGet, "/api/tasks?status=DONE", nil))
	if w.Code != http.StatusBadRequest {
		t.Fatalf("status %d body %s", w.Code, w.Body)
	}
}
