package admin

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestPublicEndpointsAnswerAnyone(t *testing.T) {
	e := newEnv(t)
	e.run([]scenario{
		{name: "status reports ok and the version", method: "GET", path: "/api/status", status: 200,
			want: map[string]any{"status": "ok", "version": "1.2.3-test"}},
		{name: "healthz is 200 while the database answers", method: "GET", path: "/healthz", status: 200},
		{name: "metrics are served in text format", method: "GET", path: "/metrics", status: 200,
			check: func(t *testing.T, _ *env, r response) {
				if !strings.Contains(r.raw, "turnpike_up 1") {
					t.Fatalf("metrics body %q", r.raw)
				}
			}},
	})
}

func TestHealthzFailsWhenTheDatabaseIsGone(t *testing.T) {
	e := newEnv(t)
	// Drain the fixture's top-ups first: the writer retries a failed batch
	// forever, so a closed database would hold up the cleanup.
	if err := e.d.Billing.Writer().Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.d.Store.Close()
	r := e.do("", "GET", "/healthz", "")
	if r.status != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", r.status)
	}
	assertErrorShape(t, r)
}

func TestMetricsCanRequireAnAdmin(t *testing.T) {
	e := newEnv(t)
	e.d.MetricsAdminOnly = true
	e.api = New(e.d)
	e.mux = http.NewServeMux()
	e.api.Register(e.mux)
	e.run([]scenario{
		{name: "anonymous is refused", method: "GET", path: "/metrics", status: 401},
		{name: "a user is refused", who: "alice", method: "GET", path: "/metrics", status: 403},
		{name: "an admin is served", who: "admin", method: "GET", path: "/metrics", status: 200},
	})
}

func TestLoginSetsASessionCookie(t *testing.T) {
	e := newEnv(t)
	r := e.do("", "POST", "/api/auth/login", `{"username":"alice","password":"alice-pass"}`)
	if r.status != 200 || r.body["username"] != "alice" || r.body["quota"] != float64(1000) {
		t.Fatalf("login: %d %s", r.status, r.raw)
	}
	if strings.Contains(r.raw, "password") || strings.Contains(r.raw, "$2a$") {
		t.Fatalf("login answer shows password material: %s", r.raw)
	}
	cookie := r.header.Get("Set-Cookie")
	for _, want := range []string{"turnpike_session=", "HttpOnly", "SameSite=Lax", "Path=/"} {
		if !strings.Contains(cookie, want) {
			t.Fatalf("cookie %q lacks %q", cookie, want)
		}
	}
	req, _ := http.NewRequest("GET", "/api/auth/me", nil)
	req.Header.Set("Cookie", strings.Split(cookie, ";")[0])
	p, ok := e.api.SessionPrincipal(req)
	if !ok || p.Username != "alice" || p.Role != store.RoleUser {
		t.Fatalf("SessionPrincipal = %+v %v", p, ok)
	}
}

func TestAuthScenarios(t *testing.T) {
	e := newEnv(t)
	e.run([]scenario{
		{name: "wrong password is 401", method: "POST", path: "/api/auth/login", body: `{"username":"alice","password":"nope"}`, status: 401,
			want: map[string]any{"error.code": "invalid_credentials"}},
		{name: "unknown user is 401 like a wrong password", method: "POST", path: "/api/auth/login", body: `{"username":"zed","password":"x"}`, status: 401},
		{name: "login without password is 400", method: "POST", path: "/api/auth/login", body: `{"username":"alice"}`, status: 400},
		{name: "login with an unknown field is 400", method: "POST", path: "/api/auth/login", body: `{"username":"alice","password":"alice-pass","otp":1}`, status: 400},
		{name: "login with a number as username names the field", method: "POST", path: "/api/auth/login", body: `{"username":5,"password":"x"}`, status: 400,
			check: func(t *testing.T, _ *env, r response) {
				if !strings.Contains(lookup(r.body, "error.message").(string), "username") {
					t.Fatalf("message does not name the field: %s", r.raw)
				}
			}},
		{name: "login with a broken body is 400", method: "POST", path: "/api/auth/login", body: `{"username":`, status: 400},
		{name: "me without credentials is 401", method: "GET", path: "/api/auth/me", status: 401},
		{name: "me with a session is the user", who: "alice", method: "GET", path: "/api/auth/me", status: 200,
			want: map[string]any{"username": "alice", "role": "user", "id": "{alice}"}},
		{name: "me with the root token is the root user", who: "root", method: "GET", path: "/api/auth/me", status: 200,
			want: map[string]any{"username": "root", "role": "root"}},
		{name: "logout clears the cookie", who: "alice", method: "POST", path: "/api/auth/logout", status: 200,
			check: func(t *testing.T, _ *env, r response) {
				if c := r.header.Get("Set-Cookie"); !strings.Contains(c, "Max-Age=0") {
					t.Fatalf("cookie not cleared: %q", c)
				}
			}},
	})
}

func TestWrongRootTokenAndForgedCookieAreRejected(t *testing.T) {
	e := newEnv(t)
	req, _ := http.NewRequest("GET", "/api/users", nil)
	req.Header.Set("Authorization", "Bearer not-the-root-token")
	req.AddCookie(&http.Cookie{Name: "turnpike_session", Value: "1.99999999999.forged"})
	rec := newRecorder(e, req)
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", rec.Code)
	}
}

func TestDisabledUsersLoseTheirSession(t *testing.T) {
	e := newEnv(t)
	e.run([]scenario{
		{name: "admin disables bob", who: "admin", method: "PATCH", path: "/api/users/{bob}", body: `{"status":"disabled"}`, status: 200,
			want: map[string]any{"status": "disabled"}},
		{name: "bob's session no longer works", who: "bob", method: "GET", path: "/api/auth/me", status: 401},
		{name: "bob cannot sign in, answered like a wrong password", method: "POST", path: "/api/auth/login", body: `{"username":"bob","password":"bob-pass"}`, status: 401,
			want: map[string]any{"error.code": "invalid_credentials"}},
	})
}

func TestRootTokenIsIgnoredWhenNotConfigured(t *testing.T) {
	e := newEnv(t)
	e.d.RootToken = ""
	e.api = New(e.d)
	e.mux = http.NewServeMux()
	e.api.Register(e.mux)
	req, _ := http.NewRequest("GET", "/api/users", nil)
	req.Header.Set("Authorization", "Bearer ")
	if rec := newRecorder(e, req); rec.Code != http.StatusUnauthorized {
		t.Fatalf("empty bearer with no root token: %d", rec.Code)
	}
}

func TestUserScenarios(t *testing.T) {
	e := newEnv(t)
	e.run([]scenario{
		{name: "anonymous cannot list users", method: "GET", path: "/api/users", status: 401},
		{name: "a user cannot list users", who: "alice", method: "GET", path: "/api/users", status: 403,
			want: map[string]any{"error.code": "forbidden"}},
		{name: "an admin lists users", who: "admin", method: "GET", path: "/api/users", status: 200, check: wantTotal(5)},
		{name: "root pages through users", who: "root", method: "GET", path: "/api/users?page=2&page_size=2", status: 200,
			check: func(t *testing.T, _ *env, r response) {
				if n := len(items(t, r)); n != 2 || r.body["total"] != float64(5) {
					t.Fatalf("page 2: %d items, body %s", n, r.raw)
				}
			}},
		{name: "a bad page is 400", who: "admin", method: "GET", path: "/api/users?page=zero", status: 400},
		{name: "users never show a password or hash", who: "admin", method: "GET", path: "/api/users", status: 200,
			check: func(t *testing.T, _ *env, r response) {
				if strings.Contains(r.raw, "password") || strings.Contains(r.raw, "$2a$") {
					t.Fatalf("password material in %s", r.raw)
				}
			}},
		{name: "an admin reads one user with its live quota", who: "admin", method: "GET", path: "/api/users/{alice}", status: 200,
			want: map[string]any{"username": "alice", "quota": 1000, "used_quota": 0, "group": "default", "status": "enabled"}},
		{name: "a missing user is 404", who: "admin", method: "GET", path: "/api/users/99999", status: 404},
		{name: "a non-numeric id is 400", who: "admin", method: "GET", path: "/api/users/abc", status: 400},
		{name: "a negative id is 400", who: "admin", method: "GET", path: "/api/users/-4", status: 400},
		{name: "an admin creates a user with starting quota", who: "admin", method: "POST", path: "/api/users",
			body: `{"username":"carol","password":"carol-pass","quota":500,"group":"vip"}`, status: 200,
			want: map[string]any{"username": "carol", "role": "user", "group": "vip", "quota": 500}},
		{name: "a duplicate username is 409", who: "admin", method: "POST", path: "/api/users",
			body: `{"username":"carol","password":"long-enough"}`, status: 409},
		{name: "a user without a password is 400", who: "admin", method: "POST", path: "/api/users", body: `{"username":"dave"}`, status: 400},
		{name: "a negative starting quota is 400", who: "admin", method: "POST", path: "/api/users", body: `{"username":"dave","password":"long-enough","quota":-5}`, status: 400},
		{name: "a fractional quota is 400 naming the field", who: "admin", method: "POST", path: "/api/users", body: `{"username":"dave","password":"long-enough","quota":1.5}`, status: 400,
			want: map[string]any{"error.message": "quota must be an integer"}},
		{name: "an unknown role is 400", who: "admin", method: "POST", path: "/api/users", body: `{"username":"dave","password":"long-enough","role":"god"}`, status: 400},
		{name: "an unknown field is 400", who: "admin", method: "POST", path: "/api/users", body: `{"username":"dave","password":"long-enough","used_quota":3}`, status: 400},
		{name: "an admin cannot create an admin", who: "admin", method: "POST", path: "/api/users", body: `{"username":"dave","password":"long-enough","role":"admin"}`, status: 403},
		{name: "an admin cannot create a root", who: "admin", method: "POST", path: "/api/users", body: `{"username":"dave","password":"long-enough","role":"root"}`, status: 403},
		{name: "root creates an admin", who: "root", method: "POST", path: "/api/users", body: `{"username":"dave","password":"long-enough","role":"admin"}`, status: 200,
			want: map[string]any{"role": "admin"}},
		{name: "an admin cannot modify root", who: "admin", method: "PATCH", path: "/api/users/{root}", body: `{"group":"vip"}`, status: 403},
		{name: "an admin cannot modify another admin", who: "admin", method: "PATCH", path: "/api/users/{admin2}", body: `{"group":"vip"}`, status: 403},
		{name: "an admin cannot promote a user to admin", who: "admin", method: "PATCH", path: "/api/users/{bob}", body: `{"role":"admin"}`, status: 403},
		{name: "an admin changes its own password", who: "admin", method: "PATCH", path: "/api/users/{admin}", body: `{"password":"new-admin-pass"}`, status: 200},
		{name: "root promotes bob", who: "root", method: "PATCH", path: "/api/users/{bob}", body: `{"role":"admin"}`, status: 200,
			want: map[string]any{"role": "admin"}},
		{name: "renaming onto a taken username is 409", who: "root", method: "PATCH", path: "/api/users/{bob}", body: `{"username":"alice"}`, status: 409},
		{name: "patching a missing user is 404", who: "root", method: "PATCH", path: "/api/users/99999", body: `{"group":"x"}`, status: 404},
		{name: "a wrong status value is 400", who: "root", method: "PATCH", path: "/api/users/{bob}", body: `{"status":"paused"}`, status: 400},
		{name: "an admin cannot delete root", who: "admin", method: "DELETE", path: "/api/users/{root}", status: 403},
		{name: "an admin cannot delete itself", who: "admin", method: "DELETE", path: "/api/users/{admin}", status: 409},
		{name: "a user cannot delete users", who: "alice", method: "DELETE", path: "/api/users/{bob}", status: 403},
		{name: "root deletes bob", who: "root", method: "DELETE", path: "/api/users/{bob}", status: 200},
		{name: "bob is gone", who: "root", method: "GET", path: "/api/users/{bob}", status: 404},
		{name: "deleting again is 404", who: "root", method: "DELETE", path: "/api/users/{bob}", status: 404},
	})
}

func TestQuotaChangesAreVisibleAtOnceAndLedgered(t *testing.T) {
	e := newEnv(t)
	e.run([]scenario{
		{name: "a top-up returns the new balance", who: "admin", method: "POST", path: "/api/users/{alice}/quota", body: `{"delta":250}`, status: 200,
			want: map[string]any{"quota": 1250}},
		{name: "the user shows it immediately", who: "admin", method: "GET", path: "/api/users/{alice}", status: 200,
			want: map[string]any{"quota": 1250}},
		{name: "a negative delta removes quota", who: "admin", method: "POST", path: "/api/users/{alice}/quota", body: `{"delta":-50}`, status: 200,
			want: map[string]any{"quota": 1200}},
		{name: "a missing delta is 400", who: "admin", method: "POST", path: "/api/users/{alice}/quota", body: `{}`, status: 400},
		{name: "a string delta is 400", who: "admin", method: "POST", path: "/api/users/{alice}/quota", body: `{"delta":"5"}`, status: 400},
		{name: "a user cannot top itself up", who: "alice", method: "POST", path: "/api/users/{alice}/quota", body: `{"delta":5}`, status: 403},
		{name: "an admin cannot top up root", who: "admin", method: "POST", path: "/api/users/{root}/quota", body: `{"delta":5}`, status: 403},
		{name: "a top-up of a missing user is 404", who: "admin", method: "POST", path: "/api/users/99999/quota", body: `{"delta":5}`, status: 404},
		{name: "setting quota by PATCH becomes a delta", who: "admin", method: "PATCH", path: "/api/users/{alice}", body: `{"quota":2000}`, status: 200,
			want: map[string]any{"quota": 2000}},
		{name: "the ledger explains the balance", who: "admin", method: "GET", path: "/api/ledger?user_id={alice}", status: 200,
			check: func(t *testing.T, e *env, r response) {
				var sum float64
				for _, it := range items(t, r) {
					sum += it["delta"].(float64)
				}
				if sum != 2000 {
					t.Fatalf("ledger sums to %v, want 2000: %s", sum, r.raw)
				}
				delta, _, err := e.d.Store.Ledger().Sum(context.Background(), e.ids["alice"])
				u, _ := e.d.Store.Users().Get(context.Background(), e.ids["alice"])
				if err != nil || delta != u.Quota {
					t.Fatalf("db quota %d, ledger %d (%v)", u.Quota, delta, err)
				}
			}},
		{name: "a user cannot read the ledger", who: "alice", method: "GET", path: "/api/ledger", status: 403},
		{name: "the top-ups are in the usage log", who: "admin", method: "GET", path: "/api/logs?type=topup&user_id={alice}", status: 200,
			check: wantTotal(3)},
		{name: "the removal is an adjustment, not a top-up", who: "admin", method: "GET", path: "/api/logs?type=adjust&user_id={alice}", status: 200,
			check: wantTotal(1)},
	})
}

// CONTRACT §16: every password is at least 8 characters, and the demo's
// published password is accepted only by the demo.
func TestPasswordsAreAtLeastEightAndNeverTheDemos(t *testing.T) {
	e := newEnv(t)
	e.run([]scenario{
		{name: "a 1-character password for a new user is refused", who: "root", method: "POST", path: "/api/users",
			body: `{"username":"dave","password":"a"}`, status: 400, want: map[string]any{"error.code": "invalid_field"}},
		{name: "a 7-character password is refused", who: "admin", method: "PATCH", path: "/api/users/{alice}",
			body: `{"password":"1234567"}`, status: 400},
		{name: "8 characters are enough", who: "admin", method: "PATCH", path: "/api/users/{bob}",
			body: `{"password":"12345678"}`, status: 200},
		{name: "one's own new password is held to it too", who: "alice", method: "POST", path: "/api/auth/password",
			body: `{"old":"alice-pass","new":"short"}`, status: 400},
		{name: "the demo's password is refused for a user", who: "root", method: "POST", path: "/api/users",
			body: `{"username":"demo","password":"demo-password"}`, status: 400},
	})
	// A database that came from a demo run holds the password; serve
	// refuses it anyway, the demo takes it.
	u, err := e.d.Store.Users().Get(context.Background(), e.ids["bob"])
	if err != nil {
		t.Fatal(err)
	}
	u.PasswordHash = fixtureHash(auth.DemoPassword)
	if err := e.d.Store.Users().Update(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	if r := e.do("", "POST", "/api/auth/login", `{"username":"bob","password":"demo-password"}`); r.status != 401 {
		t.Fatalf("serve signed in with the demo's password: %d %s", r.status, r.raw)
	}
	e.api.d.Demo = true
	if r := e.do("", "POST", "/api/auth/login", `{"username":"bob","password":"demo-password"}`); r.status != 200 {
		t.Fatalf("the demo refused its own password: %d %s", r.status, r.raw)
	}
}
