package admin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// SeedMarks remembers, per seeded record, a digest of the file entry last
// applied to it, in the database so every node sees the same marks. The
// traffic repository's named settings serve (store.TrafficRepo).
type SeedMarks interface {
	Setting(ctx context.Context, name string) (value string, ok bool, err error)
	PutSetting(ctx context.Context, name, value string) error
}

// Marks are written in a form that survives new releases: the digest is
// taken over the entry with every empty field left out, so a field a later
// release adds to an entry, unset in the file, does not make an unchanged
// entry look changed and undo what administrators edited. They are kept
// under their own names (markName), beside the older releases' marks, which
// are left as those releases wrote them: an older node restarting during a
// rolling upgrade then still finds its own marks unchanged.
//
// Older releases wrote other marks: the first kept none, later ones a
// digest of the entry as their own struct spelled it, which changes with
// every new field. An upgrade cannot compare those with the file, so the
// first start of this release adopts what they cover: a record that exists
// gets this release's mark and is left as it is; only entries for records
// that do not exist are applied. seedFormatMark says the database's marks
// are this release's; it is absent exactly when an older release seeded.
const (
	seedFormatMark = "seed2:format"
	seedFormat     = "2"
)

func markName(kind, name string) string   { return "seed2:" + kind + ":" + name }
func legacyName(kind, name string) string { return "seed:" + kind + ":" + name }

// markState is what seedOnce needs to know about the marks before the run.
type markState struct {
	// upgrade: the database was seeded by an older release (no format
	// mark, and the database was not created by this start).
	upgrade bool
}

// seedOnce runs apply when the entry for (kind, name) is new or differs
// from the one last applied, then records the entry's digest. Without
// SeedMarks every entry is applied (each apply is an idempotent upsert).
// An entry holding a password (secret) keeps its digest as a bcrypt hash,
// so the mark reveals nothing a stolen database does not already.
func (d Deps) seedOnce(ctx context.Context, kind, name string, entry any, secret bool, apply func() error) error {
	digest, legacy, err := entryDigests(entry)
	if err != nil {
		return err
	}
	mark := markName(kind, name)
	if d.SeedMarks != nil {
		write, current, err := d.markSays(ctx, kind, name, digest, legacy, secret)
		if err != nil {
			return err
		}
		if !write {
			if current {
				return nil
			}
			return d.putMark(ctx, mark, digest, secret)
		}
	}
	if err := apply(); err != nil {
		return err
	}
	if d.SeedMarks == nil {
		return nil
	}
	return d.putMark(ctx, mark, digest, secret)
}

// markSays decides whether the entry must be written, and whether its
// mark is already this release's.
func (d Deps) markSays(ctx context.Context, kind, name, digest, legacy string, secret bool) (write, current bool, err error) {
	matches := func(stored, want string) bool {
		return stored == want || (secret && auth.CheckPassword(stored, want))
	}
	prev, ok, err := d.SeedMarks.Setting(ctx, markName(kind, name))
	if err != nil || ok {
		return ok && !matches(prev, digest), ok, err
	}
	old, ok, err := d.SeedMarks.Setting(ctx, legacyName(kind, name))
	switch {
	case err != nil:
		return false, false, err
	case ok && matches(old, legacy):
		return false, false, nil // an older release's mark of this very entry
	case !d.marks.upgrade:
		return true, false, nil // a new entry: apply
	}
	// An older release seeded this database: keep what exists.
	exists, err := d.seedRecordExists(ctx, kind, name)
	return !exists, false, err
}

func (d Deps) putMark(ctx context.Context, mark, digest string, secret bool) error {
	value := digest
	if secret {
		var err error
		if value, err = auth.HashPassword(digest); err != nil {
			return err
		}
	}
	return d.SeedMarks.PutSetting(ctx, mark, value)
}

// entryDigests returns the digest of the entry with its empty fields left
// out, and the digest older releases took of the struct as it is spelled.
func entryDigests(entry any) (digest, legacy string, err error) {
	raw, err := json.Marshal(entry)
	if err != nil {
		return "", "", err
	}
	sum := sha256.Sum256(raw)
	legacy = hex.EncodeToString(sum[:])
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", "", err
	}
	canon, err := json.Marshal(pruneEmpty(v)) // maps marshal with sorted keys
	if err != nil {
		return "", "", err
	}
	sum = sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), legacy, nil
}

// pruneEmpty drops nulls, zeros, false, empty strings, lists and objects
// from object members, recursively. Lists keep their items in place.
func pruneEmpty(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, item := range x {
			item = pruneEmpty(item)
			if isEmpty(item) {
				delete(x, k)
				continue
			}
			x[k] = item
		}
		return x
	case []any:
		for i := range x {
			x[i] = pruneEmpty(x[i])
		}
		return x
	}
	return v
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case float64:
		return x == 0
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// seedRecordExists looks a seeded record up by its natural key.
func (d Deps) seedRecordExists(ctx context.Context, kind, name string) (bool, error) {
	var err error
	switch kind {
	case "group":
		var gs []store.Group
		if gs, err = d.Store.Groups().List(ctx); err == nil {
			for _, g := range gs {
				if g.Name == name {
					return true, nil
				}
			}
			return false, nil
		}
	case "user":
		_, err = d.Store.Users().GetByUsername(ctx, name)
	case "token":
		user, key, _ := strings.Cut(name, "/")
		var u *store.User
		if u, err = d.Store.Users().GetByUsername(ctx, user); err == nil {
			_, err = d.Store.Tokens().GetByName(ctx, u.ID, key)
		}
	case "channel":
		_, err = d.Store.Channels().GetByName(ctx, name)
	case "model":
		_, err = d.Store.Prices().Get(ctx, name)
	default:
		return false, nil
	}
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// loadMarkState reads whether an older release seeded this database. A
// database this start created (fresh) has nothing to adopt.
func (d Deps) loadMarkState(ctx context.Context, fresh bool) (markState, error) {
	if d.SeedMarks == nil || fresh {
		return markState{}, nil
	}
	v, ok, err := d.SeedMarks.Setting(ctx, seedFormatMark)
	if err != nil {
		return markState{}, err
	}
	return markState{upgrade: !ok || v != seedFormat}, nil
}
