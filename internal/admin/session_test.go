package admin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// login signs in through the API and returns the session cookie's value.
func (e *env) login(user, password string) string {
	e.t.Helper()
	r := e.do("", "POST", "/api/auth/login", `{"username":"`+user+`","password":"`+password+`"}`)
	if r.status != http.StatusOK {
		e.t.Fatalf("login %s: %d %s", user, r.status, r.raw)
	}
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == auth.SessionCookie {
			return c.Value
		}
	}
	e.t.Fatalf("login %s set no session cookie", user)
	return ""
}

// withCookie sends a request carrying the session cookie value.
func (e *env) withCookie(cookie, method, path, body string) response {
	e.t.Helper()
	req := httptest.NewRequest(method, e.expand(path), strings.NewReader(e.expand(body)))
	req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: cookie})
	rec := newRecorder(e, req)
	return response{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
}

func TestSessionsEndOnTheServer(t *testing.T) {
	cases := []struct {
		name string
		// act ends (or keeps) sessions; a is the session that acts, b another one of alice.
		act    func(e *env, a, b string)
		aWorks bool
		bWorks bool
	}{
		{"logout ends the session even for a kept copy of the cookie", func(e *env, a, _ string) {
			if r := e.withCookie(a, "POST", "/api/auth/logout", ""); r.status != 200 {
				t.Fatalf("logout: %d %s", r.status, r.raw)
			}
		}, false, true},
		{"changing one's password ends every other session and keeps this one", func(e *env, a, _ string) {
			if r := e.withCookie(a, "POST", "/api/auth/password", `{"old":"alice-pass","new":"alice-new-pass"}`); r.status != 200 {
				t.Fatalf("password: %d %s", r.status, r.raw)
			}
		}, true, false},
		{"a wrong old password changes nothing", func(e *env, a, _ string) {
			if r := e.withCookie(a, "POST", "/api/auth/password", `{"old":"nope","new":"x"}`); r.status != 400 {
				t.Fatalf("password with a wrong old one: %d %s", r.status, r.raw)
			}
		}, true, true},
		{"an admin setting alice's password ends all her sessions", func(e *env, _, _ string) {
			if r := e.do("admin", "PATCH", "/api/users/{alice}", `{"password":"reset-pass"}`); r.status != 200 {
				t.Fatalf("patch: %d %s", r.status, r.raw)
			}
		}, false, false},
		{"disabling alice and enabling her again does not revive her sessions", func(e *env, _, _ string) {
			for _, st := range []string{"disabled", "enabled"} {
				if r := e.do("admin", "PATCH", "/api/users/{alice}", `{"status":"`+st+`"}`); r.status != 200 {
					t.Fatalf("patch: %d %s", r.status, r.raw)
				}
			}
		}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			a, b := e.login("alice", "alice-pass"), e.login("alice", "alice-pass")
			bobs := e.login("bob", "bob-pass")
			tc.act(e, a, b)
			for _, s := range []struct {
				who    string
				cookie string
				want   bool
			}{{"a", a, tc.aWorks}, {"b", b, tc.bWorks}, {"bob", bobs, true}} {
				r := e.withCookie(s.cookie, "GET", "/api/auth/me", "")
				if (r.status == 200) != s.want {
					t.Errorf("session %s: GET /api/auth/me = %d, want working=%v", s.who, r.status, s.want)
				}
			}
		})
	}
}

func TestDisabledAccountAnswersLikeAWrongPassword(t *testing.T) {
	e := newEnv(t)
	e.do("admin", "PATCH", "/api/users/{bob}", `{"status":"disabled"}`)
	right := e.do("", "POST", "/api/auth/login", `{"username":"bob","password":"bob-pass"}`)
	wrong := e.do("", "POST", "/api/auth/login", `{"username":"bob","password":"bob-wrong"}`)
	if right.status != wrong.status || right.raw != wrong.raw {
		t.Fatalf("right password %d %s, wrong password %d %s: a guesser can tell them apart",
			right.status, right.raw, wrong.status, wrong.raw)
	}
}

func TestFailedSignInsAreThrottled(t *testing.T) {
	e := newEnv(t)
	limit := int(auth.DefaultThrottleLimits.PerAccount)
	for i := range limit {
		if r := e.do("", "POST", "/api/auth/login", `{"username":"alice","password":"guess`+strconv.Itoa(i)+`"}`); r.status != 401 {
			t.Fatalf("guess %d: %d, want 401", i, r.status)
		}
	}
	cases := []struct {
		name, body string
		status     int
	}{
		{"the next guess is refused without a password check", `{"username":"alice","password":"guess"}`, 429},
		{"even the right password waits out the window", `{"username":"alice","password":"alice-pass"}`, 429},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("", "POST", "/api/auth/login", tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.raw)
			}
			secs, err := strconv.Atoi(r.header.Get("Retry-After"))
			if err != nil || secs < 1 || secs > int(auth.DefaultThrottleLimits.Window.Seconds()) {
				t.Fatalf("Retry-After %q is not a wait within the window", r.header.Get("Retry-After"))
			}
			assertErrorShape(t, r)
		})
	}
}

// A parallel burst of wrong passwords for one account, spread over several
// addresses, gets at most the account's limit of password checks; the rest
// are refused with 429 before bcrypt. A peek-then-count throttle let all
// of them be checked.
func TestParallelWrongPasswordsCheckAtMostTheLimit(t *testing.T) {
	e := newEnv(t)
	slowHash(t, e.d.Store, "alice", "alice-pass")
	const n = 150
	limit := int(auth.DefaultThrottleLimits.PerAccount)
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest("POST", "/api/auth/login",
				strings.NewReader(`{"username":"alice","password":"guess`+strconv.Itoa(i)+`"}`))
			req.RemoteAddr = "198.51.100." + strconv.Itoa(1+i%5) + ":4000"
			statuses[i] = newRecorder(e, req).Code
		}()
	}
	wg.Wait()
	checked, refused := 0, 0
	for _, s := range statuses {
		switch s {
		case http.StatusUnauthorized:
			checked++
		case http.StatusTooManyRequests:
			refused++
		default:
			t.Fatalf("unexpected status %d", s)
		}
	}
	if checked > limit || checked+refused != n {
		t.Fatalf("%d wrong passwords were checked and %d refused; at most %d may be checked", checked, refused, limit)
	}
}

// slowHash gives name a password hash at bcrypt's default cost, so each
// check takes long enough that a burst of parallel sign-ins all reach the
// throttle before any of them is counted by a throttle that counts after.
func slowHash(t *testing.T, st store.Store, name, pw string) {
	t.Helper()
	ctx := context.Background()
	u, err := st.Users().GetByUsername(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
	if err != nil {
		t.Fatal(err)
	}
	u.PasswordHash = string(h)
	if err := st.Users().Update(ctx, u); err != nil {
		t.Fatal(err)
	}
}
