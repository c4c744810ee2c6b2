package app

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/obs"
)

func TestAcceptRecoversAHandlersPanicAsA500InTheSurfacesDialect(t *testing.T) {
	cases := []struct {
		name, path, bodyHas string
	}{
		{"an admin API call answers the admin API's error", "/api/users", `"code":"internal_error"`},
		{"an API call answers the OpenAI dialect's error", "/v1/chat/completions", `"type":"api_error"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logged bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logged, nil))
			h := accept(log, nil, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, tc.path, nil))
			if rec.Code != http.StatusInternalServerError {
				t.Fatalf("status %d, want 500", rec.Code)
			}
			if body := rec.Body.String(); !strings.Contains(body, tc.bodyHas) || strings.Contains(body, "boom") {
				t.Errorf("body %s: want %s and not the panic's value", body, tc.bodyHas)
			}
			if rec.Header().Get(obs.HeaderRequestID) == "" {
				t.Error("the 500 carries no request id")
			}
			if !strings.Contains(logged.String(), "handler panicked") || !strings.Contains(logged.String(), "boom") {
				t.Errorf("the panic was not logged: %q", logged.String())
			}
		})
	}
}

func TestAcceptLeavesAnAnswerThatStartedAndPassesAnAbortOn(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	started := accept(log, nil, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		panic("late")
	}))
	rec := httptest.NewRecorder()
	started.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/models", nil))
	if rec.Code != http.StatusAccepted || rec.Body.Len() != 0 {
		t.Errorf("an answer already under way was rewritten: status %d, body %q", rec.Code, rec.Body.String())
	}

	aborted := accept(log, nil, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }))
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler passed on to the server", v)
		}
	}()
	aborted.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/v1/models", nil))
	t.Error("an aborted handler did not panic on")
}
