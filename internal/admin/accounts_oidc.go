package admin

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/accounts"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

const oidcCookiePath = "/api/auth/oidc"

func (a *API) oidcLogin(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	o := a.d.Accounts.OIDC
	if o == nil {
		return notFound("OpenID Connect sign-in")
	}
	to, cookie, err := o.Start(r.Context())
	if err != nil {
		a.log.Warn("OpenID Connect sign-in cannot start", "err", err)
		return errorf(http.StatusBadGateway, "oidc_unavailable", "the sign-in provider does not answer")
	}
	http.SetCookie(w, &http.Cookie{Name: accounts.OIDCCookie, Value: cookie, Path: oidcCookiePath, MaxAge: 600,
		HttpOnly: true, Secure: a.d.Secure, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, to, http.StatusFound)
	return nil
}

// oidcCallback finishes a sign-in. Failures go back to the console's
// sign-in page when a browser is asking, and are JSON errors otherwise;
// either way no session is made.
func (a *API) oidcCallback(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	o := a.d.Accounts.OIDC
	if o == nil {
		return notFound("OpenID Connect sign-in")
	}
	// The flow cookie is single-use whatever happens next.
	http.SetCookie(w, &http.Cookie{Name: accounts.OIDCCookie, Value: "", Path: oidcCookiePath, MaxAge: -1,
		HttpOnly: true, Secure: a.d.Secure, SameSite: http.SameSiteLaxMode})
	err := a.finishOIDC(w, r, o)
	if err == nil {
		http.Redirect(w, r, "/", http.StatusFound)
		return nil
	}
	e := classify(err, "user")
	if e.Status >= 500 {
		a.log.Error("OpenID Connect sign-in failed", "err", err)
	} else {
		a.log.Info("OpenID Connect sign-in refused", "reason", e.Code, "err", err)
	}
	if strings.Contains(r.Header.Get("Accept"), "text/html") {
		http.Redirect(w, r, "/login?oidc_error="+url.QueryEscape(e.Code), http.StatusFound)
		return nil
	}
	return e
}

func (a *API) finishOIDC(w http.ResponseWriter, r *http.Request, o *accounts.OIDC) error {
	q := r.URL.Query()
	if q.Get("error") != "" {
		return errorf(http.StatusUnauthorized, "oidc_denied", "the provider did not sign you in")
	}
	c, err := r.Cookie(accounts.OIDCCookie)
	if err != nil {
		return errorf(http.StatusBadRequest, "oidc_state", "%s", accounts.ErrOIDCState.Error())
	}
	id, err := o.Finish(r.Context(), c.Value, q.Get("state"), q.Get("code"))
	switch {
	case errors.Is(err, accounts.ErrOIDCState):
		return errorf(http.StatusBadRequest, "oidc_state", "%s", err.Error())
	case errors.Is(err, accounts.ErrOIDCToken):
		a.log.Warn("OpenID Connect token refused", "err", err)
		return errorf(http.StatusUnauthorized, "oidc_invalid_token", "%s", accounts.ErrOIDCToken.Error())
	case err != nil:
		return err
	}
	u, err := a.oidcUser(r, id)
	if err != nil {
		return err
	}
	return a.startSession(w, r, u)
}

// oidcUser finds the account linked to the provider's subject, creating
// one on first sign-in when registration is open. An existing account with
// the same username is never linked by name: whoever controls that name at
// the provider would otherwise take the local account over.
func (a *API) oidcUser(r *http.Request, id *accounts.Identity) (*store.User, error) {
	ctx := r.Context()
	st := a.d.Accounts.Store
	uid, err := st.IdentityUser(ctx, id.Issuer, id.Subject)
	if err == nil {
		u, err := a.d.Store.Users().Get(ctx, uid)
		if errors.Is(err, store.ErrNotFound) || (err == nil && u.Status != store.StatusEnabled) {
			return nil, errorf(http.StatusForbidden, "account_disabled", "this account is disabled")
		}
		return u, err
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if !a.d.Accounts.Registration.Enabled {
		return nil, errorf(http.StatusForbidden, "registration_disabled", "no account is linked to this sign-in and registration is disabled")
	}
	name := id.Username
	if checkName("username", name, 64) != nil {
		return nil, errorf(http.StatusBadRequest, "oidc_username", "the provider's username claim is not a usable username")
	}
	// The account signs in through the provider; its password is random
	// and unknown to anyone until an administrator sets one.
	hash, err := auth.HashPassword(hex.EncodeToString(random(24)))
	if err != nil {
		return nil, err
	}
	u := &store.User{Username: name, PasswordHash: hash, Role: store.RoleUser, Group: a.d.Accounts.Registration.Group(), Status: store.StatusEnabled}
	if err := a.createAccount(ctx, u, "initial quota from registration (OpenID Connect)"); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil, errorf(http.StatusConflict, "username_taken", "the username %q is taken by an account not linked to this sign-in", name)
		}
		return nil, err
	}
	if err := st.LinkIdentity(ctx, id.Issuer, id.Subject, u.ID); err != nil {
		return nil, err
	}
	accounts.NoteTarget(ctx, strconv.FormatInt(u.ID, 10))
	return u, nil
}

func random(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}
