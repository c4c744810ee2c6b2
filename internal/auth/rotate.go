package auth

import (
	"context"
	"fmt"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// MaxRotationGrace bounds how long a rotated-out secret may keep working:
// a rotation is usually a response to a leak, so the old secret must end;
// a planned hand-over to another team may need a few weeks (--grace 8d).
const MaxRotationGrace = 30 * 24 * time.Hour

// RotateKey gives API key id a new random secret and returns it; it is
// the only time the secret is known. The old secret keeps authenticating
// for grace (zero ends it at once, bar caches: see Keys).
func RotateKey(ctx context.Context, st store.Store, id int64, grace time.Duration, now time.Time) (string, error) {
	if grace < 0 || grace > MaxRotationGrace {
		return "", fmt.Errorf("the grace must be between 0 and %v", MaxRotationGrace)
	}
	key := NewKey()
	var until *time.Time
	if grace > 0 {
		u := now.Add(grace).UTC()
		until = &u
	}
	if err := st.Tokens().Rotate(ctx, id, HashKey(key), MaskKey(key), until); err != nil {
		return "", err
	}
	return key, nil
}
