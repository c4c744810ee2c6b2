package app

import (
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
)

// browserGuard keeps other web pages from acting with a signed-in user's
// cookie. SameSite=Lax does not help against a page on another port of the
// same host (ports do not make a different "site"), so every state-changing
// request to /api and /pg that is not made with the root token must come
// from the gateway's own origin (Sec-Fetch-Site or Origin, checked by the
// standard library's CrossOriginProtection), and one that carries the
// session cookie must also be JSON (or multipart for plugin uploads): a
// plain HTML form or a text/plain fetch cannot send either without a
// preflight the gateway never grants. Clients that are not browsers send
// neither header and are unaffected.
func browserGuard(log *slog.Logger, serverAddress, rootToken string, next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	if o := originOf(serverAddress); o != "" {
		if err := cop.AddTrustedOrigin(o); err != nil {
			log.Warn("server address is not a usable origin for the cross-site check", "address", serverAddress, "err", err)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !guarded(r, rootToken) {
			next.ServeHTTP(w, r)
			return
		}
		if err := cop.Check(r); err != nil {
			refuse(w, r, http.StatusForbidden, "cross_origin_request",
				"this request came from another web origin; sign in to the console on this server instead")
			return
		}
		if hasSessionCookie(r) && !acceptedBody(r) {
			refuse(w, r, http.StatusUnsupportedMediaType, "unsupported_media_type",
				"send the body as application/json (multipart/form-data for uploads)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// guarded reports whether r is a state-changing call to a cookie
// surface that is not made with the root token.
func guarded(r *http.Request, rootToken string) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	if !strings.HasPrefix(r.URL.Path, "/api/") && !strings.HasPrefix(r.URL.Path, "/pg/") {
		return false
	}
	if tok := auth.BearerToken(r); rootToken != "" && tok != "" && auth.Equal(tok, rootToken) {
		return false
	}
	return true
}

func hasSessionCookie(r *http.Request) bool {
	_, err := r.Cookie(auth.SessionCookie)
	return err == nil
}

// acceptedBody allows JSON, multipart, and no body at all (logout, DELETE).
func acceptedBody(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return r.ContentLength == 0
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "multipart/form-data"
}

// originOf turns ServerAddress into an origin ("scheme://host[:port]").
func originOf(addr string) string {
	u, err := url.Parse(addr)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// refuse answers in the surface's error dialect: the admin API's for /api,
// the OpenAI one for the playground.
func refuse(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	if strings.HasPrefix(r.URL.Path, "/pg/") {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		_, _ = w.Write(openai.Chat.EncodeError(&ir.Error{Status: status, Kind: ir.KindInvalidRequest, Code: code, Message: msg}))
		return
	}
	apijson.Error(w, status, code, msg)
}
