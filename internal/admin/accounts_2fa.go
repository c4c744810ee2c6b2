package admin

import (
	"errors"
	"github.com/turnpike-gw/turnpike/internal/apijson"
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// sessionUser is the signed-in user behind p; the root token has no user
// and so no second factor.
func (a *API) sessionUser(r *http.Request, p *auth.Principal) error {
	if p.UserID == 0 {
		return badRequest("sign in as a user; the root token has no account to protect")
	}
	noteTarget(r.Context(), p.UserID)
	return nil
}

func readCode(w http.ResponseWriter, r *http.Request) (string, error) {
	f, err := readFields(w, r, "code")
	if err != nil {
		return "", err
	}
	var code string
	if err := getString(f, "code", &code); err != nil {
		return "", err
	}
	if code == "" {
		return "", badField("code", "is required")
	}
	return code, nil
}

func (a *API) totpStatus(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := a.sessionUser(r, p); err != nil {
		return err
	}
	st, err := a.d.Accounts.Store.TOTPStatus(r.Context(), p.UserID)
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, st)
	return nil
}

// totpSetup makes a new secret. It is shown in this answer only; it is kept
// sealed until enable confirms it, and never returned again.
func (a *API) totpSetup(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := a.sessionUser(r, p); err != nil {
		return err
	}
	setup, err := a.d.Accounts.Store.BeginTOTP(r.Context(), p.UserID, p.Username)
	if errors.Is(err, store.ErrConflict) {
		return errorf(http.StatusConflict, "two_factor_enabled", "two-factor sign-in is already on; turn it off first")
	}
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, setup)
	return nil
}

func (a *API) totpEnable(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	code, err := a.userCode(w, r, p)
	if err != nil {
		return err
	}
	codes, ok, err := a.d.Accounts.Store.EnableTOTP(r.Context(), p.UserID, code)
	if err != nil {
		return err
	}
	if !ok {
		return badField("code", "is not the current code of the secret from setup (or setup was not started)")
	}
	a.attemptSucceeded(r, a.d.Throttle, p.Username)
	apijson.Write(w, http.StatusOK, map[string]any{"enabled": true, "recovery_codes": codes})
	return nil
}

func (a *API) totpDisable(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	code, err := a.userCode(w, r, p)
	if err != nil {
		return err
	}
	ok, err := a.d.Accounts.Store.VerifyTOTP(r.Context(), p.UserID, code, false)
	if err != nil {
		return err
	}
	if !ok {
		return badField("code", "is not a current code or unused recovery code (or two-factor sign-in is off)")
	}
	a.attemptSucceeded(r, a.d.Throttle, p.Username)
	if err := a.d.Accounts.Store.DisableTOTP(r.Context(), p.UserID); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, map[string]bool{"enabled": false})
	return nil
}

// resetTOTP turns a user's second factor off for them, for someone who
// lost both the authenticator and the recovery codes. The same rule as
// every user change applies: administrators only for the users below them.
func (a *API) resetTOTP(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	u, err := a.loadUser(r)
	if err != nil {
		return err
	}
	// Oneself needs a code, as at /api/auth/2fa/disable: otherwise whoever
	// holds a stolen session of an administrator drops its second factor.
	if p.UserID != 0 && p.UserID == u.ID {
		return forbidden("turn your own two-factor sign-in off with POST /api/auth/2fa/disable and a code")
	}
	if !mayManage(p, u) {
		return forbidden("only root may change a user with role %s", u.Role)
	}
	if err := a.d.Accounts.Store.DisableTOTP(r.Context(), u.ID); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, map[string]bool{"enabled": false})
	return nil
}

// userCode reads the code a signed-in user sends to turn two-factor sign-in
// on or off, under the same throttle as sign-in: a code is a password too.
func (a *API) userCode(w http.ResponseWriter, r *http.Request, p *auth.Principal) (string, error) {
	if err := a.sessionUser(r, p); err != nil {
		return "", err
	}
	code, err := readCode(w, r)
	if err != nil {
		return "", err
	}
	return code, a.attempt(w, r, a.d.Throttle, p.Username)
}
