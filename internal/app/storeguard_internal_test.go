package app

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestStoreGuard(t *testing.T) {
	blocking := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // a query that only ends when cancelled
		w.WriteHeader(http.StatusTeapot)
	})
	quick := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Answer", "yes")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"id":1}`))
	})
	cases := []struct {
		name    string
		h       http.Handler
		path    string
		status  int
		bodyHas string
	}{
		{"a hung /api call is answered 503 store_unavailable", blocking, "/api/users", 503, "store_unavailable"},
		{"a quick /api call passes through whole", quick, "/api/users", 201, `{"id":1}`},
		{"a channel's upstream models may take longer", quick, "/api/channels/3/upstream-models", 201, `{"id":1}`},
		{"a /v1 call is not guarded", quick, "/v1/chat/completions", 201, `{"id":1}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			start := time.Now()
			storeGuard(50*time.Millisecond, c.h).ServeHTTP(rec, httptest.NewRequest("GET", c.path, nil))
			if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.bodyHas) || time.Since(start) > time.Second {
				t.Fatalf("%d %s after %v", rec.Code, rec.Body.String(), time.Since(start))
			}
			if c.status == 201 && rec.Header().Get("X-Answer") != "yes" {
				t.Fatal("the handler's header was lost")
			}
		})
	}
}

func TestStoreGuardPassesAPanicToTheServersRecovery(t *testing.T) {
	defer func() {
		if v := recover(); v != "boom" {
			t.Fatalf("recovered %v, want the handler's panic", v)
		}
	}()
	storeGuard(time.Second, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })).
		ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/users", nil))
}

func TestSlowAPIRoutes(t *testing.T) {
	cases := []struct {
		method, path string
		slow         bool
	}{
		{"POST", "/api/channels/3/test", true},
		{"GET", "/api/channels/3/upstream-models", true},
		{"GET", "/api/channels/3", false},
		{"POST", "/api/channels/3/x/test", false},
		{"POST", "/api/plugin/task", true},
		{"GET", "/api/plugin/task", false},
		{"GET", "/api/plugin/task/marketplace", true},
		{"POST", "/api/plugin/task/marketplace/install", true},
		{"GET", "/api/plugin/task/marketplace/sources", false},
		{"GET", "/api/auth/oidc/callback", true},
		{"GET", "/api/users", false},
	}
	for _, c := range cases {
		if got := slowAPIRoute(c.method, c.path); got != c.slow {
			t.Errorf("slowAPIRoute(%s %s) = %v, want %v", c.method, c.path, got, c.slow)
		}
	}
}
