package admin

import (
	"context"
	"errors"
	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/users"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// status also tells the console how to sign in and how to show money.
func (a *API) status(w http.ResponseWriter, _ *http.Request, _ *auth.Principal) error {
	apijson.Write(w, http.StatusOK, map[string]any{"status": "ok", "version": a.d.Version,
		"quota_per_usd": a.d.Billing.QuotaPerUSD(), "registration": a.d.Accounts.Registration.Enabled,
		"oidc": a.d.Accounts.OIDC != nil, "payments": a.paymentStatus()})
	return nil
}

func (a *API) healthz(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	if err := a.d.Store.Ping(ctx); err != nil {
		a.log.Warn("health check: database does not answer", "err", err)
		return errorf(http.StatusServiceUnavailable, "database_unavailable", "the database does not answer")
	}
	apijson.Write(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

func (a *API) metrics(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	if a.d.Metrics == nil {
		return notFound("metrics")
	}
	if a.d.MetricsAdminOnly {
		if _, err := a.authorize(r, store.RoleAdmin); err != nil {
			return err
		}
	}
	a.d.Metrics.ServeHTTP(w, r)
	return nil
}

var dummyHash = sync.OnceValue(func() string {
	h, _ := auth.HashPassword("no user has this password")
	return h
})

var errBadLogin = errorf(http.StatusUnauthorized, "invalid_credentials", "wrong username or password")

func (a *API) login(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	username, password, code, err := readLogin(w, r)
	if err != nil {
		return err
	}
	// Every attempt counts before bcrypt, whatever its outcome: a wrong
	// password, a right one without its second factor, a wrong code.
	if err := a.attempt(w, r, a.d.Throttle, username); err != nil {
		return err
	}
	u, err := a.checkLogin(r.Context(), username, password)
	if err != nil {
		return err
	}
	if u == nil {
		return errBadLogin
	}
	if err := a.secondFactor(r, u, code); err != nil {
		return err
	}
	a.attemptSucceeded(r, a.d.Throttle, username)
	if err := a.startSession(w, r, u); err != nil {
		return err
	}
	return a.writeUser(w, r, http.StatusOK, u)
}

// readLogin reads a sign-in (or registration) form; code is the optional
// second factor.
func readLogin(w http.ResponseWriter, r *http.Request) (username, password, code string, err error) {
	f, err := readFields(w, r, "username", "password", "code")
	if err != nil {
		return "", "", "", err
	}
	if err := firstErr(getString(f, "username", &username), getString(f, "password", &password), getString(f, "code", &code)); err != nil {
		return "", "", "", err
	}
	if username == "" || password == "" {
		return "", "", "", badRequest("username and password are required")
	}
	return username, password, code, nil
}

// noPassword is the password hash of an account made by an OpenID Connect
// sign-in: no password matches it.
const noPassword = users.NoPassword

// checkLogin returns the user whose password this is, or nil. It runs
// bcrypt exactly once whatever the outcome, and a disabled account fails
// exactly like a wrong password: neither the answer nor its timing may
// tell a guesser that a username exists or that a guessed password was
// right.
func (a *API) checkLogin(ctx context.Context, username, password string) (*store.User, error) {
	u, err := a.d.Store.Users().GetByUsername(ctx, username)
	if errors.Is(err, store.ErrNotFound) {
		auth.CheckPassword(dummyHash(), password)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if u.PasswordHash == noPassword {
		// As long as a wrong password takes: the answer's timing must not
		// tell that the account signs in through the provider alone.
		auth.CheckPassword(dummyHash(), password)
		return nil, nil
	}
	if !auth.CheckPassword(u.PasswordHash, password) || u.Status != store.StatusEnabled {
		return nil, nil
	}
	if password == auth.DemoPassword && !a.d.Demo {
		return nil, nil // published in the README: only the demo takes it
	}
	return u, nil
}

// attempt counts one guess of a secret as account on th before the secret
// is checked, and answers 429 once the account or the client's address is
// past its limit. Counting first, atomically, is what bounds a parallel
// burst: a peek before a slow bcrypt lets every request of it through. A
// throttle that cannot count (Redis down) lets the attempt through rather
// than lock everyone out.
func (a *API) attempt(w http.ResponseWriter, r *http.Request, th *auth.LoginThrottle, account string) error {
	wait, err := th.Attempt(r.Context(), account, r)
	if err != nil {
		a.log.Warn("sign-in throttle unavailable", "err", err)
		return nil
	}
	if wait <= 0 {
		return nil
	}
	secs := int64(math.Ceil(wait.Seconds()))
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	return errorf(http.StatusTooManyRequests, "too_many_attempts",
		"too many failed attempts; try again in %d seconds", secs)
}

// attemptSucceeded clears the account's count after the right secret.
func (a *API) attemptSucceeded(r *http.Request, th *auth.LoginThrottle, account string) {
	if err := th.Succeeded(r.Context(), account, r); err != nil {
		a.log.Warn("sign-in throttle: cannot clear the account's count", "err", err)
	}
}

// logout ends the session on the server, so a copy of the cookie kept
// anywhere stops working too, and then clears the cookie.
func (a *API) logout(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	if c, err := r.Cookie(auth.SessionCookie); err == nil && a.d.Sessions != nil {
		if err := a.d.Sessions.End(r.Context(), c.Value); err != nil {
			return err
		}
	}
	http.SetCookie(w, &http.Cookie{Name: auth.SessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: a.d.Secure, SameSite: http.SameSiteLaxMode})
	apijson.Write(w, http.StatusOK, map[string]bool{"success": true})
	return nil
}

// changePassword sets a signed-in user's own password and ends every other
// session of that user: whoever else held one (perhaps the reason for the
// change) is signed out, while the caller stays signed in.
func (a *API) changePassword(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	p, sess, ok := a.session(r)
	if !ok {
		return badRequest("sign in to change your password; the root token has no password")
	}
	f, err := readFields(w, r, "old", "new")
	if err != nil {
		return err
	}
	var oldPw, newPw string
	if err := firstErr(getString(f, "old", &oldPw), getString(f, "new", &newPw)); err != nil {
		return err
	}
	if err := invalid(a.users.CheckPassword("new", p.Username, newPw)); err != nil {
		return err
	}
	// The old password is guessed through a stolen session as easily as
	// through the login form, so the same throttle applies.
	if err := a.attempt(w, r, a.d.Throttle, p.Username); err != nil {
		return err
	}
	u, err := a.checkLogin(r.Context(), p.Username, oldPw)
	if err != nil {
		return err
	}
	if u == nil {
		return badField("old", "is not the current password")
	}
	a.attemptSucceeded(r, a.d.Throttle, p.Username)
	if err := invalid(a.users.SetPassword(u, "new", newPw)); err != nil {
		return err
	}
	noteTarget(r.Context(), u.ID)
	if err := a.d.Store.Users().Update(r.Context(), u); err != nil {
		return err
	}
	if err := a.d.Sessions.EndAll(r.Context(), u.ID, sess.IDHash); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, map[string]bool{"success": true})
	return nil
}

// me answers who the caller is. The root token has no user row of its own;
// it is shown as the root user when one exists.
func (a *API) me(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	var u *store.User
	var err error
	if p.UserID != 0 {
		u, err = a.d.Store.Users().Get(r.Context(), p.UserID)
	} else {
		u, err = a.d.Store.Users().GetByUsername(r.Context(), store.RoleRoot)
		if errors.Is(err, store.ErrNotFound) {
			apijson.Write(w, http.StatusOK, userView{Username: store.RoleRoot, Role: store.RoleRoot, Status: store.StatusEnabled})
			return nil
		}
	}
	if err != nil {
		return err
	}
	return a.writeUser(w, r, http.StatusOK, u)
}
