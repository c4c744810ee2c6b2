package admin

import (
	"crypto/rand"
	"errors"
	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/users"
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

// oidcLinkStart begins linking the signed-in user's account to the
// provider; the callback is the sign-in's.
func (a *API) oidcLinkStart(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	o := a.d.Accounts.OIDC
	if o == nil {
		return notFound("OpenID Connect sign-in")
	}
	if p.UserID == 0 {
		return badRequest("sign in as a user to link a sign-in; the root token has no account")
	}
	if startedElsewhere(r) {
		return errorf(http.StatusForbidden, "cross_origin_request",
			"a sign-in link is started from this server's own account page, not from another site")
	}
	to, cookie, err := o.StartLink(r.Context(), p.UserID)
	if err != nil {
		a.log.Warn("OpenID Connect link cannot start", "err", err)
		return errorf(http.StatusBadGateway, "oidc_unavailable", "the sign-in provider does not answer")
	}
	http.SetCookie(w, &http.Cookie{Name: accounts.OIDCCookie, Value: cookie, Path: oidcCookiePath, MaxAge: 600,
		HttpOnly: true, Secure: a.d.Secure, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, to, http.StatusFound)
	return nil
}

// startedElsewhere reports a link request another site made the browser
// send (CONTRACT §17): a page elsewhere could otherwise link the victim's
// account to the attacker's identity at the provider, and then sign in
// as the victim. The browser says so in Sec-Fetch-Site; an Origin of
// another host says the same for a browser that does not. Same-site
// (another port or subdomain) is another site too: SameSite cookies do
// not tell them apart.
func startedElsewhere(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	return err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host)
}

// oidcLinkStatus tells the account page whether the user's account is
// linked to the provider (never the subject: it is the provider's
// identifier for the person, not the gateway's to show).
func (a *API) oidcLinkStatus(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	o := a.d.Accounts.OIDC
	out := map[string]any{"enabled": o != nil, "linked": false, "linked_at": nil}
	if o != nil && p.UserID != 0 {
		li, err := a.d.Accounts.Store.UserIdentity(r.Context(), o.Issuer(), p.UserID)
		switch {
		case err == nil:
			out["linked"], out["linked_at"] = true, li.LinkedAt
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
	}
	apijson.Write(w, http.StatusOK, out)
	return nil
}

// oidcUnlink removes the link; the account keeps signing in with its
// password (and second factor), which an administrator can reset. An
// account without a password of its own keeps its link (409): without it
// no one could sign in to the account again.
func (a *API) oidcUnlink(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	o := a.d.Accounts.OIDC
	if o == nil {
		return notFound("OpenID Connect sign-in")
	}
	if p.UserID == 0 {
		return badRequest("sign in as a user to unlink a sign-in; the root token has no account")
	}
	noteTarget(r.Context(), p.UserID)
	u, err := a.d.Store.Users().Get(r.Context(), p.UserID)
	if err != nil {
		return err
	}
	if u.PasswordHash == noPassword {
		if _, err := a.d.Accounts.Store.UserIdentity(r.Context(), o.Issuer(), p.UserID); err == nil {
			return errorf(http.StatusConflict, "last_sign_in",
				"this account signs in only through the provider; ask an administrator to set a password before unlinking")
		}
	}
	had, err := a.d.Accounts.Store.UnlinkIdentity(r.Context(), o.Issuer(), p.UserID)
	if err != nil {
		return err
	}
	if !had {
		return errorf(http.StatusNotFound, "not_linked", "this account is not linked to the sign-in provider")
	}
	apijson.Write(w, http.StatusOK, map[string]bool{"linked": false})
	return nil
}

// oidcCallback finishes a sign-in or a link. Failures go back to the
// console (the account page for a signed-in browser, else the sign-in
// page) when a browser is asking, and are JSON errors otherwise; either
// way no session and no link is made.
func (a *API) oidcCallback(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	o := a.d.Accounts.OIDC
	if o == nil {
		return notFound("OpenID Connect sign-in")
	}
	// The flow cookie is single-use whatever happens next.
	http.SetCookie(w, &http.Cookie{Name: accounts.OIDCCookie, Value: "", Path: oidcCookiePath, MaxAge: -1,
		HttpOnly: true, Secure: a.d.Secure, SameSite: http.SameSiteLaxMode})
	linked, err := a.finishOIDC(w, r, o)
	if err == nil {
		to := "/"
		if linked {
			to = "/account?oidc_linked=1"
		}
		http.Redirect(w, r, to, http.StatusFound)
		return nil
	}
	e := classify(err, "user")
	if e.Status >= 500 {
		a.log.Error("OpenID Connect sign-in failed", "err", err)
	} else {
		a.log.Info("OpenID Connect sign-in refused", "reason", e.Code, "err", err)
	}
	if strings.Contains(r.Header.Get("Accept"), "text/html") {
		back := "/login"
		if _, ok := a.SessionPrincipal(r); ok {
			back = "/account"
		}
		http.Redirect(w, r, back+"?oidc_error="+url.QueryEscape(e.Code), http.StatusFound)
		return nil
	}
	return e
}

// finishOIDC verifies the provider's answer, then signs in, or links when
// the flow was started by StartLink; linked reports which.
func (a *API) finishOIDC(w http.ResponseWriter, r *http.Request, o *accounts.OIDC) (linked bool, err error) {
	q := r.URL.Query()
	if q.Get("error") != "" {
		return false, errorf(http.StatusUnauthorized, "oidc_denied", "the provider did not sign you in")
	}
	c, err := r.Cookie(accounts.OIDCCookie)
	if err != nil {
		return false, errorf(http.StatusBadRequest, "oidc_state", "%s", accounts.ErrOIDCState.Error())
	}
	id, err := o.Finish(r.Context(), c.Value, q.Get("state"), q.Get("code"))
	switch {
	case errors.Is(err, accounts.ErrOIDCState):
		return false, errorf(http.StatusBadRequest, "oidc_state", "%s", err.Error())
	case errors.Is(err, accounts.ErrOIDCToken):
		a.log.Warn("OpenID Connect token refused", "err", err)
		return false, errorf(http.StatusUnauthorized, "oidc_invalid_token", "%s", accounts.ErrOIDCToken.Error())
	case err != nil:
		return false, err
	}
	if id.LinkUser != 0 {
		return true, a.linkIdentity(r, id)
	}
	u, err := a.oidcUser(r, id)
	if err != nil {
		return false, err
	}
	return false, a.startSession(w, r, u)
}

// linkIdentity links the provider's subject to the account the flow was
// started for, which must still be the one signed in on this browser: a
// flow cookie carried into another user's session links nothing.
func (a *API) linkIdentity(r *http.Request, id *accounts.Identity) error {
	p, ok := a.SessionPrincipal(r)
	if !ok || p.UserID != id.LinkUser {
		return errorf(http.StatusForbidden, "oidc_link_session", "the link was started by another session; sign in and start it again")
	}
	noteTarget(r.Context(), p.UserID)
	accounts.NoteActor(r.Context(), p.UserID, p.Username, p.Role)
	err := a.d.Accounts.Store.LinkUserIdentity(r.Context(), id.Issuer, id.Subject, p.UserID)
	if errors.Is(err, accounts.ErrIdentityTaken) {
		return errorf(http.StatusConflict, "identity_linked", "this sign-in is linked to another account, or this account to another sign-in; unlink it first")
	}
	return err
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
	// The account signs in through the provider alone: it has no password
	// (no hash matches any) until an administrator sets one, so its link
	// cannot be removed before then (oidcUnlink).
	reg := a.d.Accounts.Registration
	u, err := a.users.Create(ctx, users.Account{Username: name, SignsInElsewhere: true, Group: reg.Group(),
		Quota: reg.InitialQuota, QuotaNote: "initial quota from registration (OpenID Connect)"})
	if err != nil {
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
