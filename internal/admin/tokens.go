package admin

import (
	"bytes"
	"context"
	"errors"
	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func (a *API) routeTokens(mux *http.ServeMux) {
	a.route(mux, "GET /api/tokens", store.RoleUser, "token", a.listTokens)
	a.route(mux, "POST /api/tokens", store.RoleUser, "token", a.createToken)
	a.route(mux, "GET /api/tokens/{id}", store.RoleUser, "token", a.getToken)
	a.route(mux, "PATCH /api/tokens/{id}", store.RoleUser, "token", a.patchToken)
	a.route(mux, "DELETE /api/tokens/{id}", store.RoleUser, "token", a.deleteToken)
	a.route(mux, "POST /api/tokens/{id}/rotate", store.RoleUser, "token", a.rotateToken)
}

// tokenView is an API key as the API shows it. Key is the masked form,
// except in the answer to the request that created the key.
type tokenView struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	UserID    int64      `json:"user_id"`
	Key       string     `json:"key"`
	Quota     int64      `json:"quota"`
	UsedQuota int64      `json:"used_quota"`
	Models    []string   `json:"models"`
	ExpiresAt *time.Time `json:"expires_at"`
	Status    string     `json:"status"`
	CreatedAt time.Time  `json:"created_at"`
	limitsView
	MCP *mcpGrantView `json:"mcp"`
	// ResponseCache is null when the key leaves the cache to its models.
	ResponseCache *store.ResponseCache `json:"response_cache"`
	// LogContent is null when the key follows its group.
	LogContent *store.ContentLogging `json:"log_content"`
}

func (a *API) tokenView(ctx context.Context, t *store.Token) (tokenView, error) {
	bal, limited, err := a.d.Billing.Balances().Token(ctx, t.ID)
	if err != nil {
		return tokenView{}, err
	}
	if !limited {
		bal = -1
	}
	models := t.Models
	if models == nil {
		models = []string{}
	}
	lv, err := a.limitsOf(ctx, store.SubjectToken, t.ID)
	if err != nil {
		return tokenView{}, err
	}
	grant, err := a.mcpGrantOf(ctx, store.SubjectToken, t.ID)
	if err != nil {
		return tokenView{}, err
	}
	return tokenView{ID: t.ID, Name: t.Name, UserID: t.UserID, Key: t.KeyMasked, Quota: bal, UsedQuota: t.UsedQuota,
		Models: models, ExpiresAt: t.ExpiresAt, Status: t.Status, CreatedAt: t.CreatedAt, limitsView: lv, MCP: grant,
		ResponseCache: t.ResponseCache, LogContent: t.LogContent}, nil
}

// loadToken reads the {id} token the caller may see; another user's key is
// reported missing so ids cannot be probed.
func (a *API) loadToken(r *http.Request, p *auth.Principal) (*store.Token, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	t, err := a.d.Store.Tokens().Get(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if t.UserID == p.UserID || p.Role == store.RoleRoot {
		return t, nil
	}
	if !p.AtLeast(store.RoleAdmin) {
		return nil, notFound("token")
	}
	owner, err := a.d.Store.Users().Get(r.Context(), t.UserID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if err == nil && !mayManage(p, owner) {
		return nil, notFound("token")
	}
	return t, nil
}

// tokenFilter is what a listing may show p: root every key, a user only
// its own, an administrator its own and those of the users below it
// (the same rule as for managing users).
func tokenFilter(p *auth.Principal, userID int64) store.TokenFilter {
	switch {
	case p.Role == store.RoleRoot:
		return store.TokenFilter{UserID: userID}
	case p.AtLeast(store.RoleAdmin):
		return store.TokenFilter{UserID: userID, OwnerRoles: []string{store.RoleUser}, Self: p.UserID}
	}
	return store.TokenFilter{UserID: p.UserID}
}

func (a *API) listTokens(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
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
	tokens, total, err := a.d.Store.Tokens().ListFiltered(r.Context(), tokenFilter(p, userID), page)
	if err != nil {
		return err
	}
	views := make([]tokenView, 0, len(tokens))
	for i := range tokens {
		v, err := a.tokenView(r.Context(), &tokens[i])
		if err != nil {
			return err
		}
		views = append(views, v)
	}
	apijson.Write(w, http.StatusOK, newList(views, total))
	return nil
}

func (a *API) getToken(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if _, err := pathID(r); err != nil {
		return err
	}
	if err := a.flush(r.Context()); err != nil {
		return err
	}
	t, err := a.loadToken(r, p)
	if err != nil {
		return err
	}
	v, err := a.tokenView(r.Context(), t)
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, v)
	return nil
}

// tokenInput holds the writable fields of a token request.
type tokenInput struct {
	f       fields
	name    string
	key     string
	quota   int64
	models  []string
	expires *time.Time
	status  string
	userID  int64
	// limits are the limit members sent, applied over the key's current
	// ones; limitsSent says whether there were any.
	limits     ratelimit.Limits
	limitsSent bool
	cache      *store.ResponseCache
	logContent *store.ContentLogging
}

func readTokenInput(w http.ResponseWriter, r *http.Request, cur ratelimit.Limits, allowed ...string) (*tokenInput, error) {
	f, err := readFields(w, r, append(allowed, tokenLimitFields...)...)
	if err != nil {
		return nil, err
	}
	in := &tokenInput{f: f, quota: -1}
	errs := []error{}
	_, e1 := get(f, "name", &in.name)
	_, e2 := get(f, "key", &in.key)
	_, e3 := get(f, "quota", &in.quota)
	_, e4 := getList(f, "models", &in.models)
	_, e5 := get(f, "status", &in.status)
	_, e6 := get(f, "user_id", &in.userID)
	errs = append(errs, e1, e2, e3, e4, e5, e6)
	if f.has("expires_at") {
		in.expires, err = parseExpiry(f["expires_at"])
		errs = append(errs, err)
	}
	if err := firstErr(errs...); err != nil {
		return nil, err
	}
	if in.limits, in.limitsSent, err = readLimits(f, cur); err != nil {
		return nil, err
	}
	if in.cache, err = readResponseCache(f); err != nil {
		return nil, err
	}
	if in.logContent, err = readLogContent(f); err != nil {
		return nil, err
	}
	return in, in.check()
}

func (in *tokenInput) check() error {
	f := in.f
	if f.has("name") {
		if err := checkName("name", in.name, 64); err != nil {
			return err
		}
	}
	if f.has("key") && (len(in.key) < 8 || len(in.key) > 256) {
		return badField("key", "must be 8 to 256 bytes")
	}
	if in.quota < -1 {
		return badField("quota", "must be -1 (unlimited) or a non-negative integer")
	}
	for _, m := range in.models {
		if m == "" {
			return badField("models", "must not contain empty names")
		}
	}
	if f.has("status") {
		return checkStatus(in.status)
	}
	return nil
}

// owner picks whose key a create request makes: a plain user always its
// own; an administrator the user_id given, else itself (the root token the
// root user).
func (a *API) owner(ctx context.Context, p *auth.Principal, in *tokenInput) (int64, error) {
	if in.f.has("user_id") && in.userID != p.UserID && !p.AtLeast(store.RoleAdmin) {
		// A team's manager creates keys for the team's members.
		ok, err := a.managesMember(ctx, p, in.userID)
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, forbidden("you can create keys only for yourself (or, as a team's manager, its members)")
		}
		return in.userID, nil
	}
	id := p.UserID
	if in.f.has("user_id") {
		id = in.userID
	}
	if id == 0 {
		u, err := a.d.Store.Users().GetByUsername(ctx, store.RoleRoot)
		if err != nil {
			return 0, badField("user_id", "is required for the root token")
		}
		id = u.ID
	}
	u, err := a.d.Store.Users().Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return 0, notFound("user")
	}
	if err != nil {
		return 0, err
	}
	if !mayManage(p, u) {
		return 0, forbidden("only root may manage the keys of a user with role %s", u.Role)
	}
	return id, nil
}

func (a *API) createToken(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	in, err := readTokenInput(w, r, ratelimit.Limits{}, "name", "key", "quota", "models", "expires_at", "status", "user_id", "mcp", responseCacheField, logContentField)
	if err != nil {
		return err
	}
	if err := mayLogContent(in.f, p); err != nil {
		return err
	}
	grant, err := a.readMCPGrant(r.Context(), in.f)
	if err != nil {
		return err
	}
	if !in.f.has("name") {
		return badField("name", "is required")
	}
	// A chosen value is for root and the seed file: it lets whoever
	// chooses it know the key, which nobody else may for another's key.
	if in.f.has("key") && p.Role != store.RoleRoot {
		return forbidden("only root may choose a key's value; leave key out to get a random one")
	}
	userID, err := a.owner(r.Context(), p, in)
	if err != nil {
		return err
	}
	if err := a.mayGrantKey(r.Context(), p, userID, grant); err != nil {
		return err
	}
	key := in.key
	if key == "" {
		key = auth.NewKey()
	}
	t := &store.Token{UserID: userID, Name: in.name, KeyHash: auth.HashKey(key), KeyMasked: auth.MaskKey(key),
		Quota: in.quota, Models: in.models, ExpiresAt: in.expires, Status: store.StatusEnabled, ResponseCache: in.cache,
		LogContent: in.logContent}
	if t.Models == nil {
		t.Models = []string{}
	}
	if in.f.has("status") {
		t.Status = in.status
	}
	if err := a.d.Store.Tokens().Create(r.Context(), t); err != nil {
		return err
	}
	noteTarget(r.Context(), t.ID)
	if err := a.saveLimits(r.Context(), store.SubjectToken, t.ID, in.limits, in.limitsSent); err != nil {
		return err
	}
	if err := a.saveMCPGrant(r.Context(), store.SubjectToken, t.ID, grant); err != nil {
		return err
	}
	a.d.Keys.Invalidate()
	v, err := a.tokenView(r.Context(), t)
	if err != nil {
		return err
	}
	v.Key = key // the only time the whole key leaves the server
	apijson.Write(w, http.StatusOK, v)
	return nil
}

func (a *API) patchToken(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	t, err := a.loadToken(r, p)
	if err != nil {
		return err
	}
	in, err := readTokenInput(w, r, a.currentLimits(store.SubjectToken, t.ID), "name", "quota", "models", "expires_at", "status", "mcp", responseCacheField, logContentField)
	if err != nil {
		return err
	}
	if err := mayLogContent(in.f, p); err != nil {
		return err
	}
	grant, err := a.readMCPGrant(r.Context(), in.f)
	if err != nil {
		return err
	}
	if err := a.mayGrantKey(r.Context(), p, t.UserID, grant); err != nil {
		return err
	}
	if in.f.has("name") {
		t.Name = in.name
	}
	if in.f.has("models") {
		t.Models = in.models
	}
	if in.f.has("expires_at") {
		t.ExpiresAt = in.expires
	}
	if in.f.has("status") {
		t.Status = in.status
	}
	if in.f.has(responseCacheField) {
		t.ResponseCache = in.cache // null turns the key's own cache off
	}
	if in.f.has(logContentField) {
		t.LogContent = in.logContent // null leaves it to the group
	}
	if err := a.d.Store.Tokens().Update(r.Context(), t); err != nil {
		return err
	}
	if in.f.has("quota") {
		if err := a.setTokenQuota(r.Context(), t, in.quota); err != nil {
			return err
		}
	}
	if err := a.saveLimits(r.Context(), store.SubjectToken, t.ID, in.limits, in.limitsSent); err != nil {
		return err
	}
	if err := a.saveMCPGrant(r.Context(), store.SubjectToken, t.ID, grant); err != nil {
		return err
	}
	a.d.Keys.Invalidate()
	v, err := a.tokenView(r.Context(), t)
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, v)
	return nil
}

// setTokenQuota sets a key's remaining quota. Within limited keys the change
// is a recorded adjustment of the live balance; switching between limited
// and unlimited rewrites the column, after the writer has drained what was
// queued under the old mode, and drops the cached balance.
func (a *API) setTokenQuota(ctx context.Context, t *store.Token, want int64) error {
	cur, limited, err := a.d.Billing.Balances().Token(ctx, t.ID)
	if err != nil {
		return err
	}
	switch {
	case limited && want >= 0:
		if want != cur {
			_, err = a.d.Billing.Credit(ctx, billing.Credit{UserID: t.UserID, TokenID: t.ID, Delta: want - cur, Note: "API key quota changed by an administrator"})
		}
		return err
	case !limited && want < 0:
		return nil
	}
	if err := a.flush(ctx); err != nil {
		return err
	}
	if err := a.d.Store.Tokens().SetQuota(ctx, t.ID, want); err != nil {
		return err
	}
	a.d.Billing.Balances().Forget(0, t.ID)
	return nil
}

func (a *API) deleteToken(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	t, err := a.loadToken(r, p)
	if err != nil {
		return err
	}
	if err := a.d.Store.Tokens().Delete(r.Context(), t.ID); err != nil {
		return err
	}
	a.d.Billing.Balances().Forget(0, t.ID)
	a.forgetLimits(r.Context(), store.SubjectToken, strconv.FormatInt(t.ID, 10))
	a.forgetMCPGrant(r.Context(), store.SubjectToken, t.ID)
	a.d.Keys.Invalidate()
	apijson.Write(w, http.StatusOK, deleted{ID: t.ID, Deleted: true})
	return nil
}

// rotateToken issues a new secret for a key (its owner, or whoever may
// manage it) and answers it whole, once. The old secret keeps working for
// grace_seconds, on every node, because the grace is kept on the key's row.
func (a *API) rotateToken(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	t, err := a.loadToken(r, p)
	if err != nil {
		return err
	}
	// An empty body is a rotation without grace.
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return err
	}
	f := fields{}
	if len(bytes.TrimSpace(data)) > 0 {
		if f, err = parseFields(data, []string{"grace_seconds"}); err != nil {
			return err
		}
	}
	var grace int64
	if _, err := get(f, "grace_seconds", &grace); err != nil {
		return err
	}
	if maxGrace := int64(auth.MaxRotationGrace / time.Second); grace < 0 || grace > maxGrace {
		return badField("grace_seconds", "must be 0 to %d", maxGrace)
	}
	key, err := auth.RotateKey(r.Context(), a.d.Store, t.ID, time.Duration(grace)*time.Second, time.Now())
	if err != nil {
		return err
	}
	a.d.Keys.Invalidate()
	if t, err = a.d.Store.Tokens().Get(r.Context(), t.ID); err != nil {
		return err
	}
	v, err := a.tokenView(r.Context(), t)
	if err != nil {
		return err
	}
	v.Key = key // the only time the new secret leaves the server
	apijson.Write(w, http.StatusOK, v)
	return nil
}
