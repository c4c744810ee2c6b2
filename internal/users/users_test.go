package users

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// fakeUsers records the users it is asked to create; taken names conflict.
type fakeUsers struct {
	store.UserRepo
	created []store.User
	taken   map[string]bool
}

func (f *fakeUsers) Create(_ context.Context, u *store.User) error {
	if f.taken[u.Username] {
		return store.ErrConflict
	}
	u.ID = int64(len(f.created) + 1)
	f.created = append(f.created, *u)
	return nil
}

// fakeFunds records the credits it is asked for.
type fakeFunds struct{ credits []billing.Credit }

func (f *fakeFunds) Credit(_ context.Context, c billing.Credit) (billing.Credited, error) {
	f.credits = append(f.credits, c)
	return billing.Credited{Balance: c.Delta, Applied: true}, nil
}

func TestEveryDoorCreatesUnderTheSameRules(t *testing.T) {
	cases := []struct {
		name  string
		demo  bool
		acct  Account
		field string // refused naming this input; "" when created
	}{
		{"a chosen password", false, Account{Username: "ann", Password: "long enough"}, ""},
		{"a short password", false, Account{Username: "ann", Password: "short"}, "password"},
		{"a password past what bcrypt reads", false, Account{Username: "ann", Password: strings.Repeat("x", 73)}, "password"},
		{"no password", false, Account{Username: "ann"}, "password"},
		{"the username as password", false, Account{Username: "annabelle", Password: "AnnaBelle"}, "password"},
		{"the demo's password outside the demo", false, Account{Username: "ann", Password: auth.DemoPassword}, "password"},
		{"the demo's password in the demo", true, Account{Username: "ann", Password: auth.DemoPassword}, ""},
		{"the demo's password from a seed", false, Account{Username: "demo", Password: auth.DemoPassword, Seeded: true}, ""},
		{"a short seeded password", false, Account{Username: "ann", Password: "short", Seeded: true}, "password"},
		{"an identity provider's account", false, Account{Username: "ann", SignsInElsewhere: true}, ""},
		{"an unknown role", false, Account{Username: "ann", Password: "long enough", Role: "owner"}, "role"},
		{"a padded username", false, Account{Username: " ann", Password: "long enough"}, "username"},
		{"a username with a control character", false, Account{Username: "a\x00n", Password: "long enough"}, "username"},
		{"a username past 64 bytes", false, Account{Username: strings.Repeat("a", 65), Password: "long enough"}, "username"},
		{"an unknown status", false, Account{Username: "ann", Password: "long enough", Status: "paused"}, "status"},
		{"a negative starting balance", false, Account{Username: "ann", Password: "long enough", Quota: -1}, "quota"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			repo := &fakeUsers{}
			svc := &Service{Users: repo, Funds: &fakeFunds{}, Demo: tc.demo}
			u, err := svc.Create(context.Background(), tc.acct)
			if tc.field != "" {
				iv, ok := errors.AsType[*Invalid](err)
				if !ok || iv.Field != tc.field || len(repo.created) != 0 {
					t.Fatalf("err %v, created %d; want a refusal of %s and nothing created", err, len(repo.created), tc.field)
				}
				if tc.acct.Password != "" && strings.Contains(err.Error(), tc.acct.Password) {
					t.Fatalf("the refusal quotes the password: %v", err)
				}
				return
			}
			if err != nil || len(repo.created) != 1 {
				t.Fatalf("err %v, created %d", err, len(repo.created))
			}
			got := repo.created[0]
			if got.Role != store.RoleUser || got.Group != "default" || got.Status != store.StatusEnabled || u.ID != got.ID {
				t.Fatalf("defaults: %+v", got)
			}
			if tc.acct.SignsInElsewhere != (got.PasswordHash == NoPassword) || (got.PasswordHash != NoPassword && got.PasswordHash == tc.acct.Password) {
				t.Fatalf("hash %q: want no password exactly for a provider's account, else the password hashed", got.PasswordHash)
			}
			if tc.acct.Password != "" && !auth.CheckPassword(got.PasswordHash, tc.acct.Password) {
				t.Fatal("the stored hash does not check the password")
			}
		})
	}
}

func TestAStartingBalanceIsOneRecordedCredit(t *testing.T) {
	funds := &fakeFunds{}
	svc := &Service{Users: &fakeUsers{}, Funds: funds}
	u, err := svc.Create(context.Background(), Account{Username: "ann", Password: "long enough", Group: "vip", Role: store.RoleAdmin,
		Quota: 5000, QuotaNote: "initial quota from registration"})
	if err != nil {
		t.Fatal(err)
	}
	want := billing.Credit{UserID: u.ID, Delta: 5000, Note: "initial quota from registration"}
	if len(funds.credits) != 1 || funds.credits[0].UserID != want.UserID || funds.credits[0].Delta != want.Delta ||
		funds.credits[0].Note != want.Note || funds.credits[0].Key != "" {
		t.Fatalf("credits %+v, want %+v", funds.credits, want)
	}
	if u.Group != "vip" || u.Role != store.RoleAdmin {
		t.Fatalf("user %+v", u)
	}
	if _, err := svc.Create(context.Background(), Account{Username: "bob", Password: "long enough"}); err != nil || len(funds.credits) != 1 {
		t.Fatalf("a user without a starting balance: %v, credits %d", err, len(funds.credits))
	}
	if _, err := (&Service{Users: &fakeUsers{}}).Create(context.Background(), Account{Username: "cy", Password: "long enough", Quota: 1}); err == nil {
		t.Fatal("a starting balance without billing was accepted")
	}
}

func TestATakenUsernameIsAConflict(t *testing.T) {
	svc := &Service{Users: &fakeUsers{taken: map[string]bool{"ann": true}}}
	if _, err := svc.Create(context.Background(), Account{Username: "ann", Password: "long enough"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("err %v, want store.ErrConflict", err)
	}
}

func TestSetPasswordChecksTheRulesForTheUser(t *testing.T) {
	svc := &Service{}
	u := &store.User{Username: "ann-marie"}
	for _, pw := range []string{"short", "ANN-MARIE", auth.DemoPassword} {
		if err := svc.SetPassword(u, "new", pw); err == nil || !strings.HasPrefix(err.Error(), "new ") || u.PasswordHash != "" {
			t.Fatalf("password %q: err %v, hash %q", pw, err, u.PasswordHash)
		}
	}
	if err := svc.SetPassword(u, "new", "a better one"); err != nil || !auth.CheckPassword(u.PasswordHash, "a better one") {
		t.Fatalf("err %v", err)
	}
	if err := svc.SetSeededPassword(u, auth.DemoPassword); err != nil || !auth.CheckPassword(u.PasswordHash, auth.DemoPassword) {
		t.Fatalf("a seeded password: %v", err)
	}
}
