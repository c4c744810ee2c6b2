package relay

import (
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// playgroundPrincipal is the logged-in user, acting in the group the
// playground chose: a user may only use its own group, administrators any.
// The call is billed to the user with no API key involved.
func (rl *Relay) playgroundPrincipal(r *http.Request, group string) (*auth.Principal, error) {
	p, err := rl.playgroundSession(r)
	if err != nil {
		return nil, err
	}
	return inGroup(p, group)
}

// playgroundSession is the console session behind a playground request.
func (rl *Relay) playgroundSession(r *http.Request) (*auth.Principal, error) {
	p, ok := rl.Session(r)
	if !ok {
		return nil, &ir.Error{Status: 401, Kind: ir.KindAuthentication, Code: "not_logged_in", Message: "log in to use the playground"}
	}
	return p, nil
}

// inGroup is p acting in group: its own group always, another one only for
// an administrator.
func inGroup(p *auth.Principal, group string) (*auth.Principal, error) {
	if group == "" || group == p.Group {
		return p, nil
	}
	if !p.AtLeast(store.RoleAdmin) {
		return nil, &ir.Error{Status: 403, Kind: ir.KindPermission, Code: "group_not_allowed",
			Message: "you may only use your own group " + p.Group}
	}
	cp := *p
	cp.Group = group
	return &cp, nil
}

// playgroundModels lists the models the logged-in user may pick, for the
// chosen group (?group=).
func (rl *Relay) playgroundModels(w http.ResponseWriter, r *http.Request) {
	p, err := rl.playgroundPrincipal(r, r.URL.Query().Get("group"))
	codec := rl.Codecs[protocol.OpenAI]
	if err != nil {
		writeError(w, codec, ir.As(err))
		return
	}
	body, err := codec.ListModels(rl.visibleModels(p), modelAbout, nil, nil)
	if err != nil {
		writeError(w, codec, ir.As(err))
		return
	}
	writeRaw(w, http.StatusOK, body)
}
