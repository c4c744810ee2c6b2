package store

import (
	"context"
	"time"
)

// Identity is a user's identity at an OpenID Connect provider.
type Identity struct {
	Issuer   string
	Subject  string
	UserID   int64
	LinkedAt time.Time
}

// IdentityRepo stores which provider identity signs in as which user. An
// identity belongs to one user: (issuer, subject) is unique.
type IdentityRepo interface {
	// User returns the user linked to subject at issuer, or ErrNotFound.
	User(ctx context.Context, issuer, subject string) (int64, error)
	// Of returns userID's identity at issuer, or ErrNotFound.
	Of(ctx context.Context, issuer string, userID int64) (*Identity, error)
	// Link records id; an identity already linked is ErrConflict.
	Link(ctx context.Context, id Identity) error
	// Unlink removes userID's identities at issuer and reports whether
	// there was one.
	Unlink(ctx context.Context, issuer string, userID int64) (bool, error)
}

// TOTP is a user's time-based second factor. Secret is sealed by the
// accounts package; the store never sees it in the clear.
type TOTP struct {
	UserID  int64
	Secret  string
	Enabled bool
	// LastStep is the last time step a code signed in with, so a code
	// cannot sign in twice.
	LastStep int64
}

// TOTPRepo stores second factors and their recovery codes (kept as
// hashes).
type TOTPRepo interface {
	// Get returns the user's second factor, pending or enabled, or
	// ErrNotFound.
	Get(ctx context.Context, userID int64) (*TOTP, error)
	// Begin keeps a new pending secret, replacing a pending one; a user
	// whose second factor is enabled is ErrConflict.
	Begin(ctx context.Context, userID int64, sealedSecret string, at time.Time) error
	// Enable turns the pending secret on and replaces the recovery codes
	// with codeHashes, in one transaction; false when nothing was pending.
	Enable(ctx context.Context, userID int64, codeHashes []string, at time.Time) (bool, error)
	// SpendStep records step as used if it is later than the last one, and
	// reports whether it was.
	SpendStep(ctx context.Context, userID, step int64) (bool, error)
	// SpendRecovery marks the unused recovery code with this hash used, and
	// reports whether there was one.
	SpendRecovery(ctx context.Context, userID int64, codeHash string, at time.Time) (bool, error)
	// RecoveryLeft counts the user's unused recovery codes.
	RecoveryLeft(ctx context.Context, userID int64) (int, error)
	// Delete removes the second factor and the recovery codes.
	Delete(ctx context.Context, userID int64) error
}

// Redemption is a redemption code as stored: the code itself only as a
// hash and a short hint.
type Redemption struct {
	ID        int64
	Name      string
	CodeHash  string
	CodeHint  string
	Quota     int64
	ExpiresAt *time.Time
	UsedBy    *int64
	UsedAt    *time.Time
	CreatedBy int64
	CreatedAt time.Time
}

// RedemptionRepo stores redemption codes.
type RedemptionRepo interface {
	// Create stores the codes in one transaction and sets their IDs.
	Create(ctx context.Context, codes []*Redemption) error
	// Claim marks the code with this hash used by userID, if it is unused
	// and not expired at now, and returns it; otherwise ErrNotFound. One
	// conditional update decides, however many claims race.
	Claim(ctx context.Context, codeHash string, userID int64, now time.Time) (*Redemption, error)
	// Release undoes userID's claim of code id.
	Release(ctx context.Context, id, userID int64) error
	// List lists codes newest first.
	List(ctx context.Context, p Page) ([]Redemption, int, error)
}

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

// AuditFilter narrows an audit listing; zero values do not filter.
type AuditFilter struct {
	UserID     int64
	Username   string
	Method     string
	PathPrefix string
	Since      time.Time
	Until      time.Time
}

// AuditRepo stores the audit log.
type AuditRepo interface {
	// Insert records e; text longer than a column holds is cut.
	Insert(ctx context.Context, e AuditEntry) error
	// List lists entries newest first.
	List(ctx context.Context, f AuditFilter, p Page) ([]AuditEntry, int, error)
}
