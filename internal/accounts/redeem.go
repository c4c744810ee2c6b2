package accounts

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// RedemptionPrefix starts every redemption code, so a code pasted into the
// wrong field (an API key box) is recognisable.
const RedemptionPrefix = "tpr-"

// redemptionBody is the length of a code's random part: 32 base32
// characters, 160 bits.
const redemptionBody = 32

// ErrBadCode is what every failed redemption is: unknown, used, expired or
// malformed look the same to the caller, so nobody learns which codes
// exist.
var ErrBadCode = errors.New("accounts: the code is not valid")

// NewRedemptionCode returns a fresh code.
func NewRedemptionCode() string {
	return RedemptionPrefix + codeEncoding.EncodeToString(randomBytes(20))
}

// ParseRedemptionCode normalises a code as typed or pasted (surrounding
// space, letter case) and checks its shape, so malformed input never
// reaches the database.
func ParseRedemptionCode(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	body, ok := strings.CutPrefix(s, RedemptionPrefix)
	if !ok || len(body) != redemptionBody {
		return "", ErrBadCode
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return "", ErrBadCode
		}
	}
	return s, nil
}

// Redemption is a code as lists show it: the code itself is never kept.
type Redemption struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	Code      string     `json:"code"` // masked
	Quota     int64      `json:"quota"`
	State     string     `json:"state"`
	ExpiresAt *time.Time `json:"expires_at"`
	UsedBy    *int64     `json:"used_by"`
	UsedAt    *time.Time `json:"used_at"`
	CreatedAt time.Time  `json:"created_at"`
}

// Redemption states.
const (
	StateUnused  = "unused"
	StateUsed    = "used"
	StateExpired = "expired"
)

// CreateRedemptions stores count new codes worth quota each and returns
// them; this is the only time they exist outside the caller's hands.
func (s *Store) CreateRedemptions(ctx context.Context, name string, quota int64, count int, expires *time.Time, by int64) (codes []string, ids []int64, err error) {
	codes, ids = make([]string, count), make([]int64, count)
	rows := make([]*store.Redemption, count)
	now := s.now()
	for i := range codes {
		codes[i] = NewRedemptionCode()
		rows[i] = &store.Redemption{Name: name, CodeHash: hashSecret(codes[i]), CodeHint: codes[i][:len(RedemptionPrefix)+4] + "…",
			Quota: quota, ExpiresAt: expires, CreatedBy: by, CreatedAt: now}
	}
	if err := s.st.Redemptions().Create(ctx, rows); err != nil {
		return nil, nil, err
	}
	for i, r := range rows {
		ids[i] = r.ID
	}
	return codes, ids, nil
}

// ClaimRedemption marks the code used by userID, if it is unused and not
// expired, and returns its id and quota. The store's one conditional update
// is what makes a code pay out once however many nodes and requests race
// for it.
func (s *Store) ClaimRedemption(ctx context.Context, code string, userID int64) (id, quota int64, err error) {
	r, err := s.st.Redemptions().Claim(ctx, hashSecret(code), userID, s.now())
	if errors.Is(err, store.ErrNotFound) {
		return 0, 0, ErrBadCode
	}
	if err != nil {
		return 0, 0, err
	}
	return r.ID, r.Quota, nil
}

// ReleaseRedemption undoes a claim whose top-up could not be made, so the
// code is not lost to a failure that was not the user's.
func (s *Store) ReleaseRedemption(ctx context.Context, id, userID int64) error {
	return s.st.Redemptions().Release(ctx, id, userID)
}

// ListRedemptions lists codes newest first, masked, with their state now.
func (s *Store) ListRedemptions(ctx context.Context, p store.Page) ([]Redemption, int, error) {
	rows, total, err := s.st.Redemptions().List(ctx, p)
	if err != nil {
		return nil, 0, err
	}
	now := s.now()
	out := make([]Redemption, len(rows))
	for i, r := range rows {
		v := Redemption{ID: r.ID, Name: r.Name, Code: r.CodeHint, Quota: r.Quota, ExpiresAt: r.ExpiresAt,
			UsedBy: r.UsedBy, UsedAt: r.UsedAt, CreatedAt: r.CreatedAt, State: StateUnused}
		if r.ExpiresAt != nil && !r.ExpiresAt.After(now) {
			v.State = StateExpired
		}
		if r.UsedBy != nil {
			v.State = StateUsed
		}
		out[i] = v
	}
	return out, total, nil
}
