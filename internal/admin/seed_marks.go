package admin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/turnpike-gw/turnpike/internal/auth"
)

// SeedMarks remembers, per seeded record, a digest of the file entry last
// applied to it, in the database so every node sees the same marks. The
// traffic repository's named settings serve (store.TrafficRepo).
type SeedMarks interface {
	Setting(ctx context.Context, name string) (value string, ok bool, err error)
	PutSetting(ctx context.Context, name, value string) error
}

// seedOnce runs apply when the entry for (kind, name) is new or differs
// from the one last applied, then records the entry's digest. Without
// SeedMarks every entry is applied (each apply is an idempotent upsert).
// An entry holding a password (secret) keeps its digest as a bcrypt hash,
// so the mark reveals nothing a stolen database does not already.
func (d Deps) seedOnce(ctx context.Context, kind, name string, entry any, secret bool, apply func() error) error {
	raw, err := json.Marshal(entry)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(raw)
	digest := hex.EncodeToString(sum[:])
	mark := "seed:" + kind + ":" + name
	if d.SeedMarks != nil {
		prev, ok, err := d.SeedMarks.Setting(ctx, mark)
		if err != nil {
			return err
		}
		if ok && (prev == digest || (secret && auth.CheckPassword(prev, digest))) {
			return nil
		}
	}
	if err := apply(); err != nil {
		return err
	}
	if d.SeedMarks == nil {
		return nil
	}
	value := digest
	if secret {
		if value, err = auth.HashPassword(digest); err != nil {
			return err
		}
	}
	return d.SeedMarks.PutSetting(ctx, mark, value)
}
