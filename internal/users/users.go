// Package users is the one place a user account comes to exist or gets a
// new password. The admin API, the seed file, root's first start,
// self-registration, OpenID Connect and the command line all go through
// Service, so the username, password and role rules, the hashing and the
// starting balance are the same whichever door an account came in by.
package users

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// MaxPasswordLen is every byte bcrypt reads; a longer password would be
// cut silently, so it is refused.
const MaxPasswordLen = 72

// NoPassword is the password hash of an account that signs in through an
// identity provider alone: no password matches it.
const NoPassword = ""

// Invalid is a value a rule refuses, naming the input it came in.
type Invalid struct{ Field, Message string }

func (e *Invalid) Error() string { return e.Field + " " + e.Message }

// Funds credits a starting balance (billing.Service).
type Funds interface {
	Credit(ctx context.Context, c billing.Credit) (billing.Credited, error)
}

// Service creates users and sets their passwords.
type Service struct {
	Users store.UserRepo
	// Funds credits starting balances; nil where no account may start with
	// one (the command line).
	Funds Funds
	// Demo is true only in `turnpike demo`, the one gateway that accepts
	// the demo's published password (CONTRACT §16).
	Demo bool
}

// Account is a user to create. Role, Group and Status default to user,
// "default" and enabled.
type Account struct {
	Username, Password, Role, Group, Status string
	// SignsInElsewhere is an account of an identity provider: it has no
	// password (NoPassword) until an administrator sets one.
	SignsInElsewhere bool
	// Seeded is an account of the operator's seed file or root setting.
	// Their length is checked when the configuration loads; the other
	// password rules are not applied, because a seed copied from the
	// README may hold the demo's password and the gateway must still
	// start — sign-in refuses that password instead.
	Seeded bool
	// Quota is the starting balance, credited with QuotaNote.
	Quota     int64
	QuotaNote string
}

// Rank orders the roles: 0 for an unknown one, then user, admin, root.
func Rank(role string) int {
	for i, r := range []string{store.RoleUser, store.RoleAdmin, store.RoleRoot} {
		if r == role {
			return i + 1
		}
	}
	return 0
}

// CheckRole refuses a role that is not user, admin or root.
func CheckRole(role string) error {
	if Rank(role) == 0 {
		return &Invalid{"role", fmt.Sprintf("must be %q, %q or %q", store.RoleUser, store.RoleAdmin, store.RoleRoot)}
	}
	return nil
}

// CheckUsername refuses a username that is empty, padded with spaces,
// longer than 64 bytes or holding control characters.
func CheckUsername(name string) error {
	switch {
	case name == "" || strings.TrimSpace(name) != name:
		return &Invalid{"username", "must be non-empty without leading or trailing spaces"}
	case len(name) > 64:
		return &Invalid{"username", "must be at most 64 bytes"}
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return &Invalid{"username", "must not contain control characters"}
		}
	}
	return nil
}

// CheckPassword applies the password rules to a password a person chose
// for username, naming field in the error: auth.MinPasswordLen to
// MaxPasswordLen bytes (CONTRACT §16), not the demo's published password
// outside the demo, not the username.
func (s *Service) CheckPassword(field, username, pw string) error {
	if err := checkLen(field, pw); err != nil {
		return err
	}
	if pw == auth.DemoPassword && !s.Demo {
		return &Invalid{field, "is the demo's published password; choose another"}
	}
	if strings.EqualFold(pw, username) {
		return &Invalid{field, "must not be the username"}
	}
	return nil
}

func checkLen(field, pw string) error {
	if len(pw) < auth.MinPasswordLen || len(pw) > MaxPasswordLen {
		return &Invalid{field, fmt.Sprintf("must be %d to %d bytes", auth.MinPasswordLen, MaxPasswordLen)}
	}
	return nil
}

// Check applies every rule to a, without creating it: a door that must
// refuse bad input before other work (registration's throttle) calls it
// first; Create calls it again.
func (s *Service) Check(a *Account) error {
	a.defaults()
	if err := CheckUsername(a.Username); err != nil {
		return err
	}
	if err := CheckRole(a.Role); err != nil {
		return err
	}
	if a.Status != store.StatusEnabled && a.Status != store.StatusDisabled {
		return &Invalid{"status", fmt.Sprintf("must be %q or %q", store.StatusEnabled, store.StatusDisabled)}
	}
	if a.Quota < 0 {
		return &Invalid{"quota", "must not be negative"}
	}
	switch {
	case a.SignsInElsewhere:
		return nil
	case a.Password == "":
		return &Invalid{"password", "is required"}
	case a.Seeded:
		return checkLen("password", a.Password)
	}
	return s.CheckPassword("password", a.Username, a.Password)
}

func (a *Account) defaults() {
	if a.Role == "" {
		a.Role = store.RoleUser
	}
	if a.Group == "" {
		a.Group = "default"
	}
	if a.Status == "" {
		a.Status = store.StatusEnabled
	}
}

// Create checks a, stores the user with its password hashed and credits
// its starting balance as a recorded top-up, so the ledger alone explains
// every unit the user ever had. A taken username is an error wrapping
// store.ErrConflict.
func (s *Service) Create(ctx context.Context, a Account) (*store.User, error) {
	if err := s.Check(&a); err != nil {
		return nil, err
	}
	if a.Quota > 0 && s.Funds == nil {
		return nil, errors.New("users: a starting balance needs billing")
	}
	hash := NoPassword
	if !a.SignsInElsewhere {
		var err error
		if hash, err = auth.HashPassword(a.Password); err != nil {
			return nil, err
		}
	}
	u := &store.User{Username: a.Username, PasswordHash: hash, Role: a.Role, Group: a.Group, Status: a.Status}
	if err := s.Users.Create(ctx, u); err != nil {
		return nil, err
	}
	if a.Quota > 0 {
		if _, err := s.Funds.Credit(ctx, billing.Credit{UserID: u.ID, Delta: a.Quota, Note: a.QuotaNote}); err != nil {
			return u, err
		}
	}
	return u, nil
}

// SetPassword checks pw as a password a person chose for u and sets its
// hash on u; the caller saves u and ends its sessions as its door requires.
func (s *Service) SetPassword(u *store.User, field, pw string) error {
	if err := s.CheckPassword(field, u.Username, pw); err != nil {
		return err
	}
	return setHash(u, pw)
}

// SetSeededPassword is SetPassword for a password of the operator's seed
// file (see Account.Seeded).
func (s *Service) SetSeededPassword(u *store.User, pw string) error {
	if err := checkLen("password", pw); err != nil {
		return err
	}
	return setHash(u, pw)
}

func setHash(u *store.User, pw string) error {
	h, err := auth.HashPassword(pw)
	if err != nil {
		return err
	}
	u.PasswordHash = h
	return nil
}
