// Package storetest is the conformance suite every store.Store
// implementation must pass. An implementation's tests call Run with a
// function that opens a fresh, empty store.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Run runs every conformance test against stores made by open, which must
// return a fresh, empty store and arrange its cleanup with t.Cleanup. Each
// subtest gets its own store, so subtests never see each other's rows.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	groups := []struct {
		name  string
		tests []namedTest
	}{
		{"Basics", basicTests},
		{"Users", userTests},
		{"Groups", groupTests},
		{"Tokens", tokenTests},
		{"TokenRotation", rotationTests},
		{"Channels", channelTests},
		{"Prices", priceTests},
		{"PriceVersions", priceVersionTests},
		{"Logs", logTests},
		{"Ledger", ledgerTests},
		{"Batch", batchTests},
		{"Sessions", sessionTests},
		{"Holds", holdTests},
		{"Responses", responseTests},
		{"Tasks", taskTests},
		{"Plugins", pluginTests},
		{"Payments", paymentTests},
		{"Identities", identityTests},
		{"TOTP", totpTests},
		{"Redemptions", redemptionTests},
		{"Audit", auditTests},
		{"Books", booksTests},
		{"Rollups", rollupTests},
		{"BooksRollups", booksRollupTests},
		{"FilesAndBatches", fileBatchTests},
		{"MCP", mcpTests},
		{"Guardrails", guardrailTests},
		{"Teams", teamTests},
		{"TeamBalances", teamBalanceTests},
		{"LogContents", logContentTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) { tc.run(t, open(t)) })
			}
		})
	}
}

type namedTest struct {
	name string
	run  func(t *testing.T, s store.Store)
}

var basicTests = []namedTest{
	{"ping answers on an open store", func(t *testing.T, s store.Store) {
		if err := s.Ping(ctx(t)); err != nil {
			t.Fatalf("Ping: %v", err)
		}
	}},
	{"the database clock, where the store reads one, agrees with this one", func(t *testing.T, s store.Store) {
		c, ok := s.(interface {
			DBNow(context.Context) (time.Time, error)
		})
		if !ok {
			t.Skip("the store reads no database clock")
		}
		now, err := c.DBNow(ctx(t))
		if d := time.Since(now); err != nil || d > time.Minute || d < -time.Minute {
			t.Fatalf("DBNow = %v (%v from here), %v", now, d, err)
		}
	}},
	{"dialect is one of the three known names", func(t *testing.T, s store.Store) {
		switch d := s.Dialect(); d {
		case "sqlite", "postgres", "mysql":
		default:
			t.Fatalf("Dialect() = %q", d)
		}
	}},
}

// ctx is a per-test context with a deadline, so a hung database fails the
// test instead of the whole run.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func wantErr(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

// newUser creates a user with the given name and initial quota.
func newUser(t *testing.T, s store.Store, name string, quota int64) *store.User {
	t.Helper()
	u := &store.User{Username: name, PasswordHash: "hash-" + name, Role: store.RoleUser, Group: "default", Quota: quota, Status: store.StatusEnabled}
	must(t, s.Users().Create(ctx(t), u), "create user "+name)
	return u
}

// newToken creates a token for u with the given name and quota.
func newToken(t *testing.T, s store.Store, u *store.User, name string, quota int64) *store.Token {
	t.Helper()
	tok := &store.Token{UserID: u.ID, Name: name, KeyHash: fmt.Sprintf("hash-%d-%s", u.ID, name), KeyMasked: "sk-...." + name,
		Quota: quota, Models: []string{}, Status: store.StatusEnabled}
	must(t, s.Tokens().Create(ctx(t), tok), "create token "+name)
	return tok
}

// sameTime compares instants at the microsecond precision every dialect
// keeps.
func sameTime(a, b time.Time) bool {
	return a.Truncate(time.Microsecond).Equal(b.Truncate(time.Microsecond))
}

// checkUTC fails when a returned time is not in UTC or is zero.
func checkUTC(t *testing.T, what string, v time.Time) {
	t.Helper()
	if v.IsZero() || v.Location() != time.UTC {
		t.Errorf("%s = %v, want a non-zero UTC time", what, v)
	}
}

func itoa(n int64) string { return fmt.Sprint(n) }
