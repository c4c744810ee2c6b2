package accounts

import (
	"context"
	"errors"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// IdentityUser returns the user signed in as subject at issuer, or
// store.ErrNotFound.
func (s *Store) IdentityUser(ctx context.Context, issuer, subject string) (int64, error) {
	return s.st.Identities().User(ctx, issuer, subject)
}

// LinkIdentity records that subject at issuer is userID.
func (s *Store) LinkIdentity(ctx context.Context, issuer, subject string, userID int64) error {
	return s.st.Identities().Link(ctx, store.Identity{Issuer: issuer, Subject: subject, UserID: userID, LinkedAt: s.now()})
}

// LinkedIdentity is the identity at issuer linked to a user.
type LinkedIdentity struct {
	Subject  string
	LinkedAt time.Time
}

// UserIdentity returns userID's identity at issuer, or store.ErrNotFound.
func (s *Store) UserIdentity(ctx context.Context, issuer string, userID int64) (*LinkedIdentity, error) {
	id, err := s.st.Identities().Of(ctx, issuer, userID)
	if err != nil {
		return nil, err
	}
	return &LinkedIdentity{Subject: id.Subject, LinkedAt: id.LinkedAt}, nil
}

// UnlinkIdentity removes userID's identities at issuer and reports whether
// there was one.
func (s *Store) UnlinkIdentity(ctx context.Context, issuer string, userID int64) (bool, error) {
	return s.st.Identities().Unlink(ctx, issuer, userID)
}

// ErrIdentityTaken is a link refused because the identity, or the account's
// link at that provider, already belongs elsewhere.
var ErrIdentityTaken = errors.New("accounts: the identity is linked to another account")

// LinkUserIdentity links subject at issuer to userID, who has no other
// identity there. Linking the same pair again is a no-op; an identity that
// belongs to another account, or an account already linked to another
// identity, is ErrIdentityTaken. The unique (issuer, subject) constraint
// decides a race between two accounts.
func (s *Store) LinkUserIdentity(ctx context.Context, issuer, subject string, userID int64) error {
	owner, err := s.IdentityUser(ctx, issuer, subject)
	switch {
	case err == nil && owner == userID:
		return nil
	case err == nil:
		return ErrIdentityTaken
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	if _, err := s.UserIdentity(ctx, issuer, userID); err == nil {
		return ErrIdentityTaken
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if err := s.LinkIdentity(ctx, issuer, subject, userID); err != nil {
		if owner, lerr := s.IdentityUser(ctx, issuer, subject); lerr == nil {
			if owner == userID {
				return nil
			}
			return ErrIdentityTaken
		}
		return err
	}
	return nil
}
