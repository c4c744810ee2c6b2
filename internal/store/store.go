// Package store persists the gateway's runtime entities behind one interface,
// with SQL implementations for SQLite, PostgreSQL and MySQL/MariaDB that share
// the same migrations and the same test suite.
package store

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned when a looked-up record does not exist.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a unique natural key is already taken.
var ErrConflict = errors.New("conflict")

// Page selects a slice of a list; Page is 1-based.
type Page struct {
	Page     int
	PageSize int
}

// LogFilter narrows a usage log listing; zero values do not filter.
type LogFilter struct {
	Type      string
	Model     string
	UserID    int64
	TokenID   int64
	ChannelID int64
	TeamID    int64
	OrgID     int64
	Since     time.Time
	// Until, when set, keeps rows created before it.
	Until time.Time
	// BeforeID, when set, keeps rows with a smaller id: the cursor of a
	// deep page, read by index instead of skipped by offset.
	BeforeID int64
}

// LogPage is one page of the usage log. Total is exact when TotalExact;
// past LogCountCap matches it is an estimate, since counting every match
// of a large log on each page read is what made the page slow.
type LogPage struct {
	Items      []UsageLog
	Total      int
	TotalExact bool
	// NextCursor is the BeforeID of the next page; 0 on the last one.
	NextCursor int64
}

// LogCountCap is how many matches a page counts exactly.
const LogCountCap = 10000

// TokenFilter narrows a token listing; zero values do not filter.
type TokenFilter struct {
	UserID int64
	// OwnerRoles, when set, keeps only keys whose owner has one of these
	// roles or is the user Self: what an administrator may manage.
	OwnerRoles []string
	Self       int64
}

// Store is every repository the gateway uses. Implementations are safe for
// concurrent use.
type Store interface {
	Ping(ctx context.Context) error
	Close() error
	// Dialect is "sqlite", "postgres" or "mysql".
	Dialect() string

	Users() UserRepo
	Groups() GroupRepo
	Tokens() TokenRepo
	Channels() ChannelRepo
	Prices() PriceRepo
	Logs() LogRepo
	Ledger() LedgerRepo
	Sessions() SessionRepo
	Holds() HoldRepo
	Responses() ResponseRepo
	Tasks() TaskRepo
	Plugins() PluginRepo
	Payments() PaymentRepo
	Identities() IdentityRepo
	TOTP() TOTPRepo
	Redemptions() RedemptionRepo
	Audit() AuditRepo
	Books() BooksRepo
	Rollups() RollupRepo
	MCP() MCPRepo
	Guardrails() GuardrailRepo
	Teams() TeamRepo
	Plans() PlanRepo
	LogContents() LogContentRepo
}

// UserRepo stores users. Quota and UsedQuota are changed only through
// LedgerRepo.Apply so that every movement is recorded.
type UserRepo interface {
	Create(ctx context.Context, u *User) error
	Get(ctx context.Context, id int64) (*User, error)
	GetByUsername(ctx context.Context, username string) (*User, error)
	List(ctx context.Context, p Page) ([]User, int, error)
	// Update writes username, password hash, role, group and status.
	Update(ctx context.Context, u *User) error
	Delete(ctx context.Context, id int64) error
}

// SessionRepo stores console sessions. They live in the database rather
// than only in a signed cookie so that ending one (logout, a password
// change) takes effect on every node at once.
type SessionRepo interface {
	Create(ctx context.Context, s *Session) error
	// Get returns the session with this id hash; a missing one is
	// ErrNotFound. Expiry is the caller's to check.
	Get(ctx context.Context, idHash string) (*Session, error)
	// Delete ends one session; ending a missing one is not an error.
	Delete(ctx context.Context, idHash string) error
	// DeleteUser ends every session of userID except the one whose hash is
	// keep (none when keep is empty).
	DeleteUser(ctx context.Context, userID int64, keep string) error
	// DeleteExpired removes sessions that ended before now and reports how
	// many it removed.
	DeleteExpired(ctx context.Context, now time.Time) (int64, error)
}

// GroupRepo stores pricing groups.
type GroupRepo interface {
	// Upsert writes the group's ratio; its content logging is kept.
	Upsert(ctx context.Context, g Group) error
	// SetLogContent sets the group's content logging (nil: off); a
	// missing group is ErrNotFound.
	SetLogContent(ctx context.Context, name string, lc *ContentLogging) error
	List(ctx context.Context) ([]Group, error)
	Delete(ctx context.Context, name string) error
	// InUse names what still uses the group, so deleting it can be refused.
	InUse(ctx context.Context, name string) (GroupUse, error)
}

// GroupUse is what still refers to a group: users in it (and the API keys
// they hold, which bill at the group's ratio) and channels serving it. Names
// are capped at GroupUseNames each; the counts are complete.
type GroupUse struct {
	Users    []string `json:"users"`
	UserN    int      `json:"user_count"`
	KeyN     int      `json:"key_count"`
	Channels []string `json:"channels"`
}

// GroupUseNames is how many names GroupUse lists of each kind.
const GroupUseNames = 10

// Empty reports that nothing uses the group.
func (u GroupUse) Empty() bool { return u.UserN == 0 && u.KeyN == 0 && len(u.Channels) == 0 }

// TokenRepo stores API keys. Quota and UsedQuota change only through
// LedgerRepo.Apply.
type TokenRepo interface {
	Create(ctx context.Context, t *Token) error
	Get(ctx context.Context, id int64) (*Token, error)
	// GetByHash finds the key whose current hash is keyHash, else the one
	// whose previous hash it is (PrevKeyHash; its grace may have ended:
	// the caller checks PrevUntil).
	GetByHash(ctx context.Context, keyHash string) (*Token, error)
	// GetByName finds a user's token by name (the seed file's natural key).
	GetByName(ctx context.Context, userID int64, name string) (*Token, error)
	// List lists tokens; userID 0 lists every user's.
	List(ctx context.Context, userID int64, p Page) ([]Token, int, error)
	// ListFiltered lists the tokens f selects.
	ListFiltered(ctx context.Context, f TokenFilter, p Page) ([]Token, int, error)
	// Update writes name, models, expiry and status.
	Update(ctx context.Context, t *Token) error
	// Rotate gives the key a new hash. With graceUntil set, the hash it
	// replaces keeps authenticating until then (GetByHash finds it); a
	// rotation without grace, or a later rotation, ends the old one at once.
	// A missing key is ErrNotFound.
	Rotate(ctx context.Context, id int64, hash, masked string, graceUntil *time.Time) error
	// SetQuota overwrites the key's remaining quota; -1 makes it unlimited
	// and anything below -1 is rejected. It records no ledger entry: it is
	// for switching a key between limited and unlimited, which changes the
	// key's mode rather than moving quota. A missing key is ErrNotFound.
	SetQuota(ctx context.Context, id, quota int64) error
	Delete(ctx context.Context, id int64) error
}

// ChannelRepo stores channels and keeps the ability index in step with them:
// Create and Update rewrite the channel's abilities in the same transaction.
type ChannelRepo interface {
	Create(ctx context.Context, c *Channel) error
	Get(ctx context.Context, id int64) (*Channel, error)
	GetByName(ctx context.Context, name string) (*Channel, error)
	List(ctx context.Context, p Page) ([]Channel, int, error)
	// All returns every channel, for building routing snapshots.
	All(ctx context.Context) ([]Channel, error)
	Update(ctx context.Context, c *Channel) error
	Delete(ctx context.Context, id int64) error
	Abilities(ctx context.Context) ([]Ability, error)
}

// PriceRepo stores model prices keyed by model name, each with its
// versions.
type PriceRepo interface {
	// Upsert sets the model's price: it adds a version numbered after the
	// model's last one (deleted or not), effective from p.EffectiveFrom
	// (now when zero) and recorded with p.Source and p.Actor, and writes
	// the model's fallbacks. No earlier version is changed.
	Upsert(ctx context.Context, p ModelPrice) error
	// Get and List answer each model with the version in effect now (the
	// earliest one while none is, so a model priced only from a future
	// time still shows what it will cost).
	Get(ctx context.Context, name string) (*ModelPrice, error)
	List(ctx context.Context) ([]ModelPrice, error)
	// Delete removes the model's price; its versions stay as history.
	Delete(ctx context.Context, name string) error
	// History is the model's versions, newest (highest numbered) first;
	// empty, not an error, for a model that never had a price.
	History(ctx context.Context, name string) ([]PriceVersion, error)
	// Versions is every version of every model that has a price now, in
	// model and version order: what a price snapshot chooses from.
	Versions(ctx context.Context) ([]PriceVersion, error)
	// Revision changes whenever a price is set or deleted: a cheap check
	// of whether a snapshot is still current.
	Revision(ctx context.Context) (PriceRevision, error)
}

// PriceRevision is where the prices stand: the newest version written and
// how many models are priced.
type PriceRevision struct {
	LastVersion int64
	Models      int64
}

// LogRepo stores the usage log. Insert takes a batch because logs are
// written behind the request path.
type LogRepo interface {
	Insert(ctx context.Context, logs []UsageLog) error
	// List returns newest first.
	List(ctx context.Context, f LogFilter, p Page) ([]UsageLog, int, error)
	// Page is List with a capped count and the next page's cursor.
	Page(ctx context.Context, f LogFilter, p Page) (LogPage, error)
	// Each calls fn for every matching row oldest first, reading in
	// bounded pages after the last id seen (an export's stream).
	Each(ctx context.Context, f LogFilter, fn func(UsageLog) error) error
	// Get returns one row by id, or ErrNotFound.
	Get(ctx context.Context, id int64) (UsageLog, error)
	// Prune deletes at most limit rows created before the given time (one
	// bounded statement) and reports how many it deleted.
	Prune(ctx context.Context, before time.Time, limit int) (int64, error)
	// PruneRange deletes at most limit rows created in w whose id is at
	// most maxID (one bounded statement): the archive's deletion of a day
	// it has verified.
	PruneRange(ctx context.Context, w Window, maxID int64, limit int) (int64, error)
	// Oldest is the creation time of the oldest row (false: none).
	Oldest(ctx context.Context) (time.Time, bool, error)
}

// LedgerRepo applies quota movements. Apply writes a batch of entries and the
// matching balance changes to users and tokens in one transaction; an entry
// whose Key was already applied is skipped, so replays are harmless.
type LedgerRepo interface {
	Apply(ctx context.Context, entries []LedgerEntry) error
	// Sum returns the summed Delta and Used of a user's entries.
	Sum(ctx context.Context, userID int64) (delta, used int64, err error)
	List(ctx context.Context, userID int64, p Page) ([]LedgerEntry, int, error)
}

// BatchWriter is implemented by stores that can record ledger entries and
// usage logs in one transaction. WriteBatch does what LedgerRepo.Apply and
// LogRepo.Insert do, but commits both or neither, so a batch that failed
// can be written again whole without duplicating its logs. Callers check
// for it with a type assertion and fall back to the two calls.
type BatchWriter interface {
	WriteBatch(ctx context.Context, entries []LedgerEntry, logs []UsageLog) error
	// WriteItems writes billing items in one transaction (see BillingItem)
	// and reports which of them were written; the others were replays or
	// ended holds that were no longer open.
	WriteItems(ctx context.Context, items []BillingItem) ([]bool, error)
}

// HoldRepo keeps the open holds and the leases of the nodes that own them.
// Holds are opened, handed over and closed only through BillingItems, in
// the transaction of their ledger entries.
type HoldRepo interface {
	// Lease records that node is alive until until (insert or extend).
	Lease(ctx context.Context, node string, until time.Time) error
	// Lapsed lists up to limit open holds owned by a node other than
	// except whose lease ended before now, or that has no lease at all.
	Lapsed(ctx context.Context, now time.Time, except string, limit int) ([]Hold, error)
	// List lists every open hold, oldest first.
	List(ctx context.Context) ([]Hold, error)
	// Forget deletes the leases that ended before now and own no hold.
	Forget(ctx context.Context, now time.Time) error
}

// ResponseRepo indexes stored responses (/v1/responses): which channel
// created each and for whom, so a later GET reaches that channel and only
// its owner.
type ResponseRepo interface {
	// Remember records id; a repeated id takes the latest owner.
	Remember(ctx context.Context, id string, channelID, userID int64, at time.Time) error
	// Lookup returns the channel, owner and time of id; a missing id is
	// ErrNotFound.
	Lookup(ctx context.Context, id string) (channelID, userID int64, at time.Time, err error)
	// Prune deletes the entries remembered before before.
	Prune(ctx context.Context, before time.Time) error
}
