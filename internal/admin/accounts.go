package admin

import (
	"context"
	"errors"
	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/users"
	"net/http"
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/accounts"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// AccountDeps are the accounts features (CONTRACT.md §12). A nil Store
// leaves them unmounted, for tests of the rest of the API.
type AccountDeps struct {
	Store        *accounts.Store
	OIDC         *accounts.OIDC // nil when no issuer is configured
	Registration config.Registration
}

// routeAccounts mounts registration, OpenID Connect sign-in, two-factor
// sign-in, redemption codes and the audit log.
func (a *API) routeAccounts(mux *http.ServeMux) {
	if a.d.Accounts.Store == nil {
		return
	}
	a.route(mux, "POST /api/auth/register", "", "user", a.register)
	a.route(mux, "GET /api/auth/oidc/login", "", "sign-in", a.oidcLogin)
	a.route(mux, "GET /api/auth/oidc/callback", "", "sign-in", a.oidcCallback)
	a.route(mux, "GET /api/auth/oidc/link", store.RoleUser, "sign-in link", a.oidcLinkStart)
	a.route(mux, "DELETE /api/auth/oidc/link", store.RoleUser, "sign-in link", a.oidcUnlink)
	a.route(mux, "GET /api/auth/oidc/identity", store.RoleUser, "sign-in link", a.oidcLinkStatus)
	a.route(mux, "GET /api/auth/2fa", store.RoleUser, "two-factor setting", a.totpStatus)
	a.route(mux, "POST /api/auth/2fa/setup", store.RoleUser, "two-factor setting", a.totpSetup)
	a.route(mux, "POST /api/auth/2fa/enable", store.RoleUser, "two-factor setting", a.totpEnable)
	a.route(mux, "POST /api/auth/2fa/disable", store.RoleUser, "two-factor setting", a.totpDisable)
	a.route(mux, "DELETE /api/users/{id}/2fa", store.RoleAdmin, "user", a.resetTOTP)
	a.route(mux, "POST /api/redemptions", store.RoleAdmin, "redemption code", a.createRedemptions)
	a.route(mux, "GET /api/redemptions", store.RoleAdmin, "redemption code", a.listRedemptions)
	a.route(mux, "POST /api/user/redeem", store.RoleUser, "redemption code", a.redeem)
	a.route(mux, "GET /api/audit", store.RoleRoot, "audit entry", a.listAudit)
}

// startSession signs u in on this response.
func (a *API) startSession(w http.ResponseWriter, r *http.Request, u *store.User) error {
	noteTarget(r.Context(), u.ID)
	token, exp, err := a.d.Sessions.Start(r.Context(), u.ID)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: auth.SessionCookie, Value: token, Path: "/", Expires: exp,
		HttpOnly: true, Secure: a.d.Secure, SameSite: http.SameSiteLaxMode})
	accounts.NoteActor(r.Context(), u.ID, u.Username, u.Role)
	return nil
}

var (
	errCodeRequired = errorf(http.StatusUnauthorized, "two_factor_required", "this account needs a two-factor code: send code")
	errBadCode      = errorf(http.StatusUnauthorized, "invalid_two_factor_code", "wrong or already used two-factor code")
)

// secondFactor is the login's second step for a user whose password was
// right. The sign-in attempt was counted before the password was checked,
// so codes (and recovery codes) cannot be guessed faster than passwords.
func (a *API) secondFactor(r *http.Request, u *store.User, code string) error {
	st := a.d.Accounts.Store
	if st == nil {
		return nil
	}
	on, err := st.TOTPEnabled(r.Context(), u.ID)
	if err != nil || !on {
		return err
	}
	if code == "" {
		return errCodeRequired
	}
	ok, err := st.VerifyTOTP(r.Context(), u.ID, code, true)
	if err != nil {
		return err
	}
	if !ok {
		return errBadCode
	}
	return nil
}

func (a *API) register(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	reg := a.d.Accounts.Registration
	if !reg.Enabled {
		return errorf(http.StatusForbidden, "registration_disabled", "registration is disabled on this gateway")
	}
	username, password, _, err := readLogin(w, r)
	if err != nil {
		return err
	}
	acct := users.Account{Username: username, Password: password, Group: reg.Group(),
		Quota: reg.InitialQuota, QuotaNote: "initial quota from registration"}
	if err := invalid(a.users.Check(&acct)); err != nil {
		return err
	}
	// Registration is throttled like sign-in: every attempt counts against
	// the client's address, so one client cannot mint accounts in bulk or
	// probe which usernames exist faster than it could guess passwords.
	if err := a.attempt(w, r, a.d.Throttle, username); err != nil {
		return err
	}
	u, err := a.users.Create(r.Context(), acct)
	if err != nil {
		if errors.Is(err, store.ErrConflict) {
			return errorf(http.StatusConflict, "username_taken", "this username is taken")
		}
		return err
	}
	noteTarget(r.Context(), u.ID)
	if err := a.startSession(w, r, u); err != nil {
		return err
	}
	return a.writeUser(w, r, http.StatusOK, u)
}

// noteTarget tells the audit log the id of the record a call acted on
// when its path does not name it: a creation, or the caller's own account.
func noteTarget(ctx context.Context, id int64) {
	if id != 0 {
		accounts.NoteTarget(ctx, strconv.FormatInt(id, 10))
	}
}

// parseTime reads an optional RFC 3339 or Unix-seconds query parameter,
// under its name or one of the aliases other gateways use.
func parseTime(r *http.Request, name string, aliases ...string) (time.Time, error) {
	s := firstQuery(r, append([]string{name}, aliases...)...)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > maxExpiry.Unix() {
		return time.Time{}, badRequest("%s must be an RFC 3339 time or Unix seconds, got %q", name, s)
	}
	return time.Unix(n, 0), nil
}

func firstQuery(r *http.Request, names ...string) string {
	for _, n := range names {
		if v := r.URL.Query().Get(n); v != "" {
			return v
		}
	}
	return ""
}

func (a *API) listAudit(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	p, err := parsePage(r)
	if err != nil {
		return err
	}
	var f accounts.AuditFilter
	q := r.URL.Query()
	if f.UserID, err = queryID(r, "user_id"); err != nil {
		return err
	}
	f.Username, f.Method, f.PathPrefix = firstQuery(r, "user", "username"), q.Get("method"), firstQuery(r, "path", "path_prefix")
	if f.Since, err = parseTime(r, "since", "from", "start"); err != nil {
		return err
	}
	if f.Until, err = parseTime(r, "until", "to", "end"); err != nil {
		return err
	}
	items, total, err := a.d.Accounts.Store.ListAudit(r.Context(), f, p)
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, newList(items, total))
	return nil
}
