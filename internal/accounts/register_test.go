package accounts_test

import (
	"net/http"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

func withRegistration(enabled bool, group string, quota int64) testkit.Option {
	return testkit.WithConfig(func(c *config.Config) {
		c.Registration = config.Registration{Enabled: enabled, DefaultGroup: group, InitialQuota: quota}
	})
}

func TestRegistrationIsRefusedWhileDisabled(t *testing.T) {
	g := testkit.Start(t, testkit.WithRootToken(rootToken))
	a := call(t, g, "POST", "/api/auth/register", map[string]string{"username": "newbie", "password": "long-enough-pw"}, "")
	if a.status != http.StatusForbidden {
		t.Fatalf("register while disabled: %d %s", a.status, a.raw)
	}
	if a := call(t, g, "POST", "/api/auth/login", map[string]string{"username": "newbie", "password": "long-enough-pw"}, ""); a.status != 401 {
		t.Fatalf("the refused account can sign in: %d", a.status)
	}
}

func TestRegistrationCreatesAUserWithTheDefaultGroupAndARecordedInitialQuota(t *testing.T) {
	g := testkit.Start(t, testkit.WithRootToken(rootToken), testkit.WithGroups(map[string]float64{"starter": 1}),
		withRegistration(true, "starter", 12345))
	a := call(t, g, "POST", "/api/auth/register", map[string]string{"username": "newbie", "password": "long-enough-pw"}, "")
	if a.status != http.StatusOK {
		t.Fatalf("register: %d %s", a.status, a.raw)
	}
	if a.body["role"] != "user" || a.body["group"] != "starter" || num(a.body["quota"]) != 12345 {
		t.Fatalf("registered user: %v", a.body)
	}
	if a.session() == nil {
		t.Fatal("registration did not sign the new user in")
	}
	g.Login(t, "newbie", "long-enough-pw")
	if err := g.App.Writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	logs := call(t, g, "GET", "/api/logs?type=topup&user_id="+itoa(num(a.body["id"])), nil, rootToken)
	items, _ := logs.body["items"].([]any)
	if len(items) != 1 || num(items[0].(map[string]any)["quota"]) != 12345 {
		t.Fatalf("initial quota is not one topup log row: %s", logs.raw)
	}
	delta, _, err := g.App.Store.Ledger().Sum(t.Context(), num(a.body["id"]))
	if err != nil || delta != 12345 {
		t.Fatalf("ledger sum %d, %v; want 12345", delta, err)
	}
}

func TestRegistrationRefusalsCreateNothing(t *testing.T) {
	g := testkit.Start(t, testkit.WithRootToken(rootToken), withRegistration(true, "", 0),
		testkit.WithUsers(config.SeedUser{Username: "taken", Password: "taken-password", Role: "user"}))
	cases := []struct {
		name     string
		body     any
		status   int
		username string
	}{
		{"reused username", map[string]string{"username": "taken", "password": "another-password"}, http.StatusConflict, ""},
		{"short password", map[string]string{"username": "shorty", "password": "short"}, http.StatusBadRequest, "shorty"},
		{"password is the username", map[string]string{"username": "sameasname", "password": "SameAsName"}, http.StatusBadRequest, "sameasname"},
		{"password over 72 bytes", map[string]string{"username": "longpw", "password": string(make([]byte, 73))}, http.StatusBadRequest, "longpw"},
		{"missing password", map[string]string{"username": "nopw"}, http.StatusBadRequest, "nopw"},
		{"unknown field", map[string]string{"username": "admin2", "password": "long-enough-pw", "role": "admin"}, http.StatusBadRequest, "admin2"},
		{"username with spaces", map[string]string{"username": " padded", "password": "long-enough-pw"}, http.StatusBadRequest, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := call(t, g, "POST", "/api/auth/register", tc.body, "")
			if a.status != tc.status {
				t.Fatalf("status %d, want %d: %s", a.status, tc.status, a.raw)
			}
			if a.session() != nil {
				t.Fatal("a refused registration set a session")
			}
			if tc.username != "" {
				if _, err := g.App.Store.Users().GetByUsername(t.Context(), tc.username); err == nil {
					t.Fatalf("user %s was created", tc.username)
				}
			}
		})
	}
}

func TestStatusTellsTheConsoleHowToSignInAndPriceMoney(t *testing.T) {
	g := testkit.Start(t, withRegistration(true, "", 0))
	a := call(t, g, "GET", "/api/status", nil, "")
	if a.body["status"] != "ok" || num(a.body["quota_per_usd"]) != 500000 || a.body["registration"] != true || a.body["oidc"] != false {
		t.Fatalf("status: %s", a.raw)
	}
}
