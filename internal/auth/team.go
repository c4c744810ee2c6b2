package auth

import (
	"context"
	"errors"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// defaultGroup is the group of a user nobody placed in one: a team's or
// organisation's default group applies to such users only.
const defaultGroup = "default"

// withTeam completes p with u's team and organisation (CONTRACT.md §18):
// their ids, their model allow-lists and, for a user in the default group,
// their default group. A user in no team costs nothing here; a team that
// vanished meanwhile leaves the user as if in none.
func withTeam(ctx context.Context, st store.Store, p *Principal, u *store.User) error {
	if u.TeamID == 0 {
		return nil
	}
	t, err := st.Teams().GetTeam(ctx, u.TeamID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	p.TeamID, p.TeamRole, p.OrgID, p.TeamModels = t.ID, u.TeamRole, t.OrgID, t.Models
	p.TeamPays = t.Billing == store.BillingShared
	group := t.Group
	if o, err := st.Teams().GetOrg(ctx, t.OrgID); err == nil {
		p.OrgModels = o.Models
		if group == "" {
			group = o.Group
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if group != "" && (p.Group == "" || p.Group == defaultGroup) {
		p.Group = group
	}
	return nil
}

// allowedBy reports whether a non-empty allow-list names model (an empty
// one allows every model).
func allowedBy(list []string, model string) bool {
	if len(list) == 0 {
		return true
	}
	for _, m := range list {
		if m == model {
			return true
		}
	}
	return false
}

// ModelRefusedBy names the level whose allow-list refuses model: "key",
// "team" or "org"; empty when every level allows it.
func (p *Principal) ModelRefusedBy(model string) string {
	switch {
	case !allowedBy(p.Models, model):
		return "key"
	case !allowedBy(p.TeamModels, model):
		return "team"
	case !allowedBy(p.OrgModels, model):
		return "org"
	}
	return ""
}

// WithTeam is withTeam for callers outside this package that build a
// principal from a user (console sessions).
func WithTeam(ctx context.Context, st store.Store, p *Principal, u *store.User) error {
	return withTeam(ctx, st, p, u)
}
