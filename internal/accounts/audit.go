package accounts

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// AuditEntry is one recorded state-changing /api call (store.AuditEntry).
type AuditEntry = store.AuditEntry

// AuditFilter narrows a listing (store.AuditFilter).
type AuditFilter = store.AuditFilter

// Audit outcomes.
const (
	OutcomeSuccess = "success"
	OutcomeDenied  = "denied"
	OutcomeFailure = "failure"
)

// InsertAudit records one entry.
func (s *Store) InsertAudit(ctx context.Context, e AuditEntry) error {
	return s.st.Audit().Insert(ctx, e)
}

// ListAudit lists entries newest first.
func (s *Store) ListAudit(ctx context.Context, f AuditFilter, p store.Page) ([]AuditEntry, int, error) {
	return s.st.Audit().List(ctx, f, p)
}

// auditNote is where handlers add what the middleware cannot see from
// outside: who signed in (there is no principal before a sign-in) and the
// id of what was created.
type auditNote struct {
	mu       sync.Mutex
	userID   int64
	username string
	role     string
	target   string
}

type noteKey struct{}

// NoteActor tells the audit log who acted, for calls that establish the
// caller themselves (sign-in, registration).
func NoteActor(ctx context.Context, userID int64, username, role string) {
	if n, ok := ctx.Value(noteKey{}).(*auditNote); ok {
		n.mu.Lock()
		n.userID, n.username, n.role = userID, username, role
		n.mu.Unlock()
	}
}

// NoteTarget tells the audit log which record a call acted on when the
// path does not name it (a creation).
func NoteTarget(ctx context.Context, target string) {
	if n, ok := ctx.Value(noteKey{}).(*auditNote); ok {
		n.mu.Lock()
		n.target = target
		n.mu.Unlock()
	}
}

// Auditor is the middleware that records every state-changing /api call.
type Auditor struct {
	Store *Store
	// Principal resolves the caller before the handler runs (a logout
	// ends the session it would otherwise be looked up by).
	Principal func(r *http.Request) (*auth.Principal, bool)
	Log       *slog.Logger
}

// Wrap records calls to next. The row is written before the answer is
// finished, on a context that outlives the client, so a graceful shutdown
// (which waits for handlers) loses none and a client hanging up does not
// erase its trace.
func (a *Auditor) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !Audited(r) {
			next.ServeHTTP(w, r)
			return
		}
		a.serveAudited(next, w, r)
	})
}

// serveAudited is Wrap for a call it records. It is a function of its own so
// that the entry it builds is not in the frame every unaudited call carries:
// a /v1 stream keeps that frame on its goroutine's stack while it is open.
func (a *Auditor) serveAudited(next http.Handler, w http.ResponseWriter, r *http.Request) {
	note := &auditNote{}
	if p, ok := a.Principal(r); ok {
		note.userID, note.username, note.role = p.UserID, p.Username, p.Role
	}
	rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	start := time.Now()
	next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), noteKey{}, note)))
	note.mu.Lock()
	e := AuditEntry{CreatedAt: start, UserID: note.userID, Username: note.username, Role: note.role,
		Method: r.Method, Path: r.URL.Path, Target: note.target, Status: rec.status,
		RequestID: w.Header().Get("X-Request-Id"), ClientIP: clientIP(r)}
	note.mu.Unlock()
	if e.Target == "" {
		e.Target = TargetOf(r.URL.Path)
	}
	e.Outcome = outcomeOf(rec.status)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
	defer cancel()
	if err := a.Store.InsertAudit(ctx, e); err != nil {
		a.Log.Error("audit log: cannot record a call", "method", e.Method, "path", e.Path, "err", err)
	}
}

// Audited reports whether r is a state-changing /api call. The OpenID
// Connect callback is a GET but signs someone in (and may create the
// account), so it counts.
func Audited(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet:
		return r.URL.Path == "/api/auth/oidc/callback"
	case http.MethodHead, http.MethodOptions:
		return false
	}
	return r.URL.Path == "/api" || strings.HasPrefix(r.URL.Path, "/api/")
}

func outcomeOf(status int) string {
	switch {
	case status < 400:
		return OutcomeSuccess
	case status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusTooManyRequests:
		return OutcomeDenied
	}
	return OutcomeFailure
}

// nameKeyed are the collections whose records are named, not numbered.
var nameKeyed = map[string]bool{"models": true, "groups": true}

// pluginPaths are the segments under /api/plugin/task that are not a
// plugin's key.
var pluginPaths = map[string]bool{"dry-run": true, "marketplace": true}

// TargetOf finds the record a path acts on: the name under a name-keyed
// collection (/api/models/org/model → org/model), a task plugin's key
// (/api/plugin/task/acme/activate → acme; one of its versions → acme@1.2), else its first numeric segment
// (/api/users/7/quota → 7).
func TargetOf(path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) >= 3 && nameKeyed[segs[1]] {
		return strings.Join(segs[2:], "/")
	}
	if len(segs) >= 4 && segs[1] == "plugin" && segs[2] == "task" && !pluginPaths[segs[3]] {
		if len(segs) >= 6 && segs[4] == "versions" {
			return segs[3] + "@" + segs[5]
		}
		return segs[3]
	}
	for _, s := range segs {
		if isDigits(s) {
			return s
		}
	}
	return ""
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
