package admin

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func (a *API) status(w http.ResponseWriter, _ *http.Request, _ *auth.Principal) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": a.d.Version})
	return nil
}

func (a *API) healthz(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	if err := a.d.Store.Ping(ctx); err != nil {
		a.log.Warn("health check: database does not answer", "err", err)
		return errorf(http.StatusServiceUnavailable, "database_unavailable", "the database does not answer")
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
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
	f, err := readFields(w, r, "username", "password")
	if err != nil {
		return err
	}
	var username, password string
	if _, err := get(f, "username", &username); err != nil {
		return err
	}
	if _, err := get(f, "password", &password); err != nil {
		return err
	}
	if username == "" || password == "" {
		return badRequest("username and password are required")
	}
	u, err := a.d.Store.Users().GetByUsername(r.Context(), username)
	if errors.Is(err, store.ErrNotFound) {
		// Spend the same bcrypt time as for a real user, so response
		// times do not tell which usernames exist.
		auth.CheckPassword(dummyHash(), password)
		return errBadLogin
	}
	if err != nil {
		return err
	}
	if !auth.CheckPassword(u.PasswordHash, password) {
		return errBadLogin
	}
	if u.Status != store.StatusEnabled {
		return forbidden("this account is disabled")
	}
	token, exp := a.d.Sessions.Issue(u.ID)
	http.SetCookie(w, &http.Cookie{Name: auth.SessionCookie, Value: token, Path: "/", Expires: exp,
		HttpOnly: true, Secure: a.d.Secure, SameSite: http.SameSiteLaxMode})
	return a.writeUser(w, r, http.StatusOK, u)
}

func (a *API) logout(w http.ResponseWriter, _ *http.Request, _ *auth.Principal) error {
	http.SetCookie(w, &http.Cookie{Name: auth.SessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: a.d.Secure, SameSite: http.SameSiteLaxMode})
	writeJSON(w, http.StatusOK, map[string]bool{"success": true})
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
			writeJSON(w, http.StatusOK, userView{Username: store.RoleRoot, Role: store.RoleRoot, Status: store.StatusEnabled})
			return nil
		}
	}
	if err != nil {
		return err
	}
	return a.writeUser(w, r, http.StatusOK, u)
}
