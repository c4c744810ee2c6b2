package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/contentlog"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// contentFlushWait bounds how long reading a content waits for the writer.
const contentFlushWait = 5 * time.Second

// logContentField is the content logging member of a group or key
// (CONTRACT §20).
const logContentField = "log_content"

// readLogContent decodes the log_content member of a group or key body:
// nil when it is null (no setting of its own: a key then follows its
// group, a group logs nothing). Left-out members take the contract's
// defaults (enabled false, max_kb 64).
func readLogContent(f fields) (*store.ContentLogging, error) {
	if !f.has(logContentField) || f.isNull(logContentField) {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if _, err := get(f, logContentField, &obj); err != nil || obj == nil {
		return nil, badField(logContentField, "must be an object with enabled and max_kb, or null")
	}
	rf := fields{}
	for k, v := range obj {
		if k != "enabled" && k != "max_kb" {
			return nil, badField(logContentField, "has unknown field %s; allowed fields are enabled, max_kb", k)
		}
		rf[logContentField+"."+k] = v
	}
	lc := store.ContentLogging{MaxKB: contentlog.DefaultMaxKB}
	if _, err := get(rf, "log_content.enabled", &lc.Enabled); err != nil {
		return nil, err
	}
	if _, err := get(rf, "log_content.max_kb", &lc.MaxKB); err != nil {
		return nil, err
	}
	if lc.MaxKB < 1 || lc.MaxKB > contentlog.MaxMaxKB {
		return nil, badField("log_content.max_kb", "must be a whole number of KiB from 1 to %d", contentlog.MaxMaxKB)
	}
	return &lc, nil
}

// seedLogContent checks a group's or key's log_content object of the seed
// file with the API's rules; nil when the entry states none.
func seedLogContent(m map[string]any) (*store.ContentLogging, error) {
	if m == nil {
		return nil, nil
	}
	raw, err := json.Marshal(map[string]any{logContentField: m})
	if err != nil {
		return nil, err
	}
	f, err := parseFields(raw, []string{logContentField})
	if err != nil {
		return nil, err
	}
	return readLogContent(f)
}

// mayLogContent refuses a key's log_content from anyone below an
// administrator: whether calls are recorded is the operator's decision (a
// group an administrator put under logging must not be left by its
// members' keys).
func mayLogContent(f fields, p *auth.Principal) error {
	if f.has(logContentField) && !p.AtLeast(store.RoleAdmin) {
		return forbidden("only an administrator may set a key's log_content")
	}
	return nil
}

// logContentView is GET /api/logs/{id}/content: the call's request and
// answer as kept, secrets redacted, each marked when it was cut at the
// setting's max_kb.
type logContentView struct {
	ID               int64  `json:"id"`
	Request          string `json:"request"`
	Answer           string `json:"answer"`
	RequestTruncated bool   `json:"request_truncated"`
	AnswerTruncated  bool   `json:"answer_truncated"`
}

// getLogContent answers a row's kept content to the row's owner and to
// administrators; another user's row, a row without content and content
// that was not kept all read as not found, as GET /api/logs/{id} does.
func (a *API) getLogContent(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	l, err := a.visibleLog(r, p)
	if err != nil {
		return err
	}
	var other struct {
		Content string `json:"content"`
	}
	if a.d.Content == nil || json.Unmarshal(l.Other, &other) != nil || other.Content == "" {
		return notFound("log content")
	}
	// A call that has just finished is read once its content is written;
	// a writer that is not running (a node stopping) is not waited for.
	fctx, cancel := context.WithTimeout(r.Context(), contentFlushWait)
	_ = a.d.Content.Flush(fctx)
	cancel()
	c, err := a.d.Content.Get(r.Context(), other.Content)
	if errors.Is(err, contentlog.ErrNotFound) || (err == nil && c.UserID != l.UserID) {
		return notFound("log content")
	}
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, logContentView{ID: l.ID, Request: c.Request, Answer: c.Answer,
		RequestTruncated: c.RequestTruncated, AnswerTruncated: c.AnswerTruncated})
	return nil
}

// putGroupLogContent applies a group body's log_content (null turns it
// off) after its ratio was written; a body without one keeps the group's,
// which g then shows.
func (a *API) putGroupLogContent(r *http.Request, f fields, g *store.Group) error {
	if !f.has(logContentField) {
		if cur, err := a.findGroup(r, g.Name); err == nil {
			g.LogContent = cur.LogContent
		}
		return nil
	}
	lc, err := readLogContent(f)
	if err != nil {
		return err
	}
	g.LogContent = lc
	return a.d.Store.Groups().SetLogContent(r.Context(), g.Name, lc)
}

// seedGroupLogContent applies a seed group's log_content when its entry
// states one.
func seedGroupLogContent(ctx context.Context, d Deps, name string, m map[string]any) error {
	if m == nil {
		return nil
	}
	lc, err := seedLogContent(m)
	if err != nil {
		return err
	}
	return d.Store.Groups().SetLogContent(ctx, name, lc)
}
