package store

import (
	"context"
	"time"
)

// Subject kinds of the limits of organisations and teams (CONTRACT.md
// §18), stored beside those of users and keys.
const (
	SubjectTeam = "team"
	SubjectOrg  = "org"
)

// Team billing: own (each member pays from its own balance) or shared
// (members' calls are paid from the team's balance).
const (
	BillingOwn    = "own"
	BillingShared = "shared"
)

// Org is an organisation: teams belong to one. Models is its allow-list
// (empty: every model); Group the default group of its members' calls.
type Org struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Models    []string  `json:"models"`
	Group     string    `json:"group"`
	CreatedAt time.Time `json:"created_at"`
}

// Team is a team of one organisation. Quota and UsedQuota are its shared
// balance, moved only through the ledger like a user's.
type Team struct {
	ID        int64     `json:"id"`
	OrgID     int64     `json:"org_id"`
	Name      string    `json:"name"`
	Models    []string  `json:"models"`
	Group     string    `json:"group"`
	Billing   string    `json:"billing"`
	Quota     int64     `json:"quota"`
	UsedQuota int64     `json:"used_quota"`
	CreatedAt time.Time `json:"created_at"`
}

// UsageGroup is one line of a team's usage report: the calls, tokens and
// quota of one user, key or model.
type UsageGroup struct {
	Key              string `json:"key"`
	Requests         int64  `json:"requests"`
	PromptTokens     int64  `json:"prompt_tokens"`
	CompletionTokens int64  `json:"completion_tokens"`
	Quota            int64  `json:"quota"`
}

// TeamRepo stores organisations, teams and membership.
type TeamRepo interface {
	CreateOrg(ctx context.Context, o *Org) error
	GetOrg(ctx context.Context, id int64) (*Org, error)
	ListOrgs(ctx context.Context) ([]Org, error)
	// UpdateOrg writes name, models and group.
	UpdateOrg(ctx context.Context, o *Org) error
	// DeleteOrg removes an organisation that has no team (ErrConflict
	// otherwise).
	DeleteOrg(ctx context.Context, id int64) error

	CreateTeam(ctx context.Context, t *Team) error
	GetTeam(ctx context.Context, id int64) (*Team, error)
	ListTeams(ctx context.Context) ([]Team, error)
	// UpdateTeam writes org, name, models, group and billing; the balance
	// moves only through the ledger.
	UpdateTeam(ctx context.Context, t *Team) error
	// DeleteTeam removes a team and takes its members out of it.
	DeleteTeam(ctx context.Context, id int64) error

	// SetMembership puts a user in a team with a role (teamID 0 and an
	// empty role: in none).
	SetMembership(ctx context.Context, userID, teamID int64, role string) error
	// Members lists a team's users.
	Members(ctx context.Context, teamID int64) ([]User, error)
}

// TeamPaidMarker is in the other of every usage row that moved a team's
// shared balance (a member's call the team paid for, a team top-up): the
// books take such a row's team_id, not its user, as the account it moved.
// Only the server writes it (billing marks the row); a client's text in
// other is a JSON string whose quotes are escaped, so it cannot spell it.
const TeamPaidMarker = `"paid_by":"team"`
