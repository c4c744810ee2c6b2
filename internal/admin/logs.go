package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/apijson"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// listLogs shows the usage log newest first. The billing writer is flushed
// first so a call that has just finished is already listed.
// A deep page is read after ?cursor= (the next_cursor of the page
// before) instead of by page number; total is exact up to
// store.LogCountCap matches and an estimate past it (total_exact false).
func (a *API) listLogs(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	page, err := parsePage(r)
	if err != nil {
		return err
	}
	f, err := logFilter(r, p)
	if err != nil {
		return err
	}
	if f.BeforeID, err = queryID(r, "cursor"); err != nil {
		return err
	}
	if err := a.flush(r.Context()); err != nil {
		return err
	}
	pg, err := a.d.Store.Logs().Page(r.Context(), f, page)
	if err != nil {
		return err
	}
	if !p.AtLeast(store.RoleAdmin) {
		for i := range pg.Items {
			pg.Items[i].Other = userOther(pg.Items[i].Other)
		}
	}
	apijson.Write(w, http.StatusOK, logList{list: newList(pg.Items, pg.Total), TotalExact: pg.TotalExact, NextCursor: pg.NextCursor})
	return nil
}

// logList is a page of the usage log: a list with its count's exactness
// and the next page's cursor (0 on the last page).
type logList struct {
	list[store.UsageLog]
	TotalExact bool  `json:"total_exact"`
	NextCursor int64 `json:"next_cursor,omitempty"`
}

// logFilter reads the filters of the usage log; a plain user reads only
// its own rows, whatever it asks.
func logFilter(r *http.Request, p *auth.Principal) (store.LogFilter, error) {
	q := r.URL.Query()
	f := store.LogFilter{Type: q.Get("type"), Model: q.Get("model")}
	for _, it := range []struct {
		name string
		dst  *int64
	}{{"user_id", &f.UserID}, {"token_id", &f.TokenID}, {"channel_id", &f.ChannelID}, {"team_id", &f.TeamID}, {"org_id", &f.OrgID}} {
		var err error
		if *it.dst, err = queryID(r, it.name); err != nil {
			return f, err
		}
	}
	// A team's manager reads its team's rows; anyone else below an
	// administrator only its own.
	if !p.AtLeast(store.RoleAdmin) && (f.TeamID == 0 || !manages(p, f.TeamID)) {
		f.UserID = p.UserID
	}
	return f, nil
}

// adminOnlyOther are the members of a row's other that only administrators
// read: what the call cost the operator reveals the operator's discount
// (CONTRACT §13).
var adminOnlyOther = []string{"upstream_cost_usd"}

// userOther is a row's other as a plain user reads it.
func userOther(other json.RawMessage) json.RawMessage {
	hit := false
	for _, k := range adminOnlyOther {
		hit = hit || bytes.Contains(other, []byte(`"`+k+`"`))
	}
	if !hit {
		return other
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(other, &m) != nil {
		return nil // not an object: nothing in it can be shown safely
	}
	for _, k := range adminOnlyOther {
		delete(m, k)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return out
}

// getLog returns one usage row with its detail (other.attempts: how the
// call was routed). The visibility of GET /api/logs holds: root and
// admins read every row, a user only its own, and another user's row
// reads as not found, so ids reveal nothing.
func (a *API) getLog(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	l, err := a.visibleLog(r, p)
	if err != nil {
		return err
	}
	if !p.AtLeast(store.RoleAdmin) {
		l.Other = userOther(l.Other)
	}
	apijson.Write(w, http.StatusOK, l)
	return nil
}

// visibleLog reads the row the path names once the billing writer has
// stored what it holds; another user's row reads as not found for anyone
// below an administrator, so ids reveal nothing.
func (a *API) visibleLog(r *http.Request, p *auth.Principal) (store.UsageLog, error) {
	id, err := pathID(r)
	if err != nil {
		return store.UsageLog{}, err
	}
	if err := a.flush(r.Context()); err != nil {
		return store.UsageLog{}, err
	}
	l, err := a.d.Store.Logs().Get(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !p.AtLeast(store.RoleAdmin) && l.UserID != p.UserID) {
		return store.UsageLog{}, notFound("log")
	}
	return l, err
}

// listLedger shows quota movements newest first, for audits.
func (a *API) listLedger(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	page, err := parsePage(r)
	if err != nil {
		return err
	}
	userID, err := queryID(r, "user_id")
	if err != nil {
		return err
	}
	if err := a.flush(r.Context()); err != nil {
		return err
	}
	entries, total, err := a.d.Store.Ledger().List(r.Context(), userID, page)
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, newList(entries, total))
	return nil
}
