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

// AuditEntry is one recorded state-changing /api call. It holds who, what
// and how it ended, never a body: secrets travel in bodies.
type AuditEntry struct {
	ID        int64     `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	UserID    int64     `json:"user_id"`
	Username  string    `json:"username"`
	Role      string    `json:"role"`
	Method    string    `json:"method"`
	Path      string    `json:"path"`
	Target    string    `json:"target"`
	// TargetID repeats Target under the name CONTRACT.md §12 uses.
	TargetID  string `json:"target_id"`
	Status    int    `json:"status"`
	Outcome   string `json:"outcome"`
	RequestID string `json:"request_id,omitempty"`
	ClientIP  string `json:"client_ip"`
}

// AuditFilter narrows a listing; zero values do not filter.
type AuditFilter struct {
	UserID     int64
	Username   string
	Method     string
	PathPrefix string
	Since      time.Time
	Until      time.Time
}

// Audit outcomes.
const (
	OutcomeSuccess = "success"
	OutcomeDenied  = "denied"
	OutcomeFailure = "failure"
)

// InsertAudit records one entry.
func (s *Store) InsertAudit(ctx context.Context, e AuditEntry) error {
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO audit_log (created_ms, user_id, username, role, method, path, target, status, outcome, request_id, client_ip)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), e.CreatedAt.UnixMilli(), e.UserID, clip(e.Username), clip(e.Role), clip(e.Method),
		clip(e.Path), clip(e.Target), e.Status, e.Outcome, clip(e.RequestID), clip(e.ClientIP))
	return err
}

// clip keeps a value within the column (255 characters on MySQL).
func clip(s string) string {
	if len(s) <= 200 {
		return s
	}
	s = s[:200]
	for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 { // do not cut a UTF-8 sequence
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xC0 {
		s = s[:len(s)-1]
	}
	return s
}

// ListAudit lists entries newest first.
func (s *Store) ListAudit(ctx context.Context, f AuditFilter, p store.Page) ([]AuditEntry, int, error) {
	var where []string
	var args []any
	add := func(cond string, v any) { where = append(where, cond); args = append(args, v) }
	if f.UserID != 0 {
		add("user_id = ?", f.UserID)
	}
	if f.Username != "" {
		add("username = ?", f.Username)
	}
	if f.Method != "" {
		add("method = ?", strings.ToUpper(f.Method))
	}
	if f.PathPrefix != "" {
		add("path LIKE ? ESCAPE '!'", likePrefix(f.PathPrefix))
	}
	if !f.Since.IsZero() {
		add("created_ms >= ?", f.Since.UnixMilli())
	}
	if !f.Until.IsZero() {
		add("created_ms < ?", f.Until.UnixMilli())
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	var total int
	if err := s.db.QueryRowContext(ctx, s.q("SELECT COUNT(*) FROM audit_log"+cond), args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, created_ms, user_id, username, role, method, path, target, status, outcome, request_id, client_ip
FROM audit_log`+cond+" ORDER BY id DESC LIMIT ? OFFSET ?"), append(args, p.PageSize, (p.Page-1)*p.PageSize)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []AuditEntry{}
	for rows.Next() {
		var e AuditEntry
		var ms int64
		if err := rows.Scan(&e.ID, &ms, &e.UserID, &e.Username, &e.Role, &e.Method, &e.Path, &e.Target, &e.Status,
			&e.Outcome, &e.RequestID, &e.ClientIP); err != nil {
			return nil, 0, err
		}
		e.CreatedAt = time.UnixMilli(ms).UTC()
		e.TargetID = e.Target
		out = append(out, e)
	}
	return out, total, rows.Err()
}

// likePrefix escapes LIKE's wildcards (with '!', which every dialect
// accepts as an ESCAPE character) so a prefix matches literally.
func likePrefix(p string) string {
	r := strings.NewReplacer("!", "!!", "%", "!%", "_", "!_")
	return r.Replace(p) + "%"
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
	})
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
