package archive

import (
	"context"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Reader reads archived days back.
type Reader struct {
	Bucket     Bucket
	Prefix     string
	IsNotFound func(error) bool
}

// WithArchive is st whose books read the archive for archived days: the
// reconciliation of a window that reaches into them sums their rows from
// the archive (CONTRACT §20). The archived days are the run of days with a
// manifest from the window's first day on; the rows from the first day
// without one on are read from the database.
func WithArchive(st store.Store, r Reader) store.Store { return archived{Store: st, r: r} }

type archived struct {
	store.Store
	r Reader
}

func (a archived) Books() store.BooksRepo {
	return &archivedBooks{BooksRepo: a.Store.Books(), r: a.r, cache: map[store.Window][]store.LogTotal{}}
}

type archivedBooks struct {
	store.BooksRepo
	r     Reader
	cache map[store.Window][]store.LogTotal
	ends  map[store.Window]time.Time
}

// LogTotals sums the archived part of w from the archive (once; it does
// not change) and the rest from the database.
func (b *archivedBooks) LogTotals(ctx context.Context, w store.Window) ([]store.LogTotal, error) {
	old, end, err := b.archivedTotals(ctx, w)
	if err != nil {
		return nil, err
	}
	out := append([]store.LogTotal(nil), old...)
	if end.Before(w.Until) {
		fresh, err := b.BooksRepo.LogTotals(ctx, store.Window{Since: maxTime(end, w.Since), Until: w.Until})
		if err != nil {
			return nil, err
		}
		out = append(out, fresh...)
	}
	return out, nil
}

func (b *archivedBooks) archivedTotals(ctx context.Context, w store.Window) ([]store.LogTotal, time.Time, error) {
	if b.ends == nil {
		b.ends = map[store.Window]time.Time{}
	}
	if t, ok := b.cache[w]; ok {
		return t, b.ends[w], nil
	}
	sums := map[store.LogTotal]store.LogTotal{}
	day := utcDay(w.Since)
	for ; day.Before(w.Until); day = day.Add(24 * time.Hour) {
		m, err := readManifest(ctx, b.r.Bucket, b.r.Prefix, day, b.r.IsNotFound)
		if err != nil {
			return nil, day, err
		}
		if len(m.Parts) == 0 {
			break
		}
		err = eachArchived(ctx, b.r.Bucket, b.r.Prefix, day, m, func(l store.UsageLog) error {
			if l.CreatedAt.Before(w.Since) || !l.CreatedAt.Before(w.Until) {
				return nil
			}
			addArchived(sums, l)
			return nil
		})
		if err != nil {
			return nil, day, err
		}
	}
	out := make([]store.LogTotal, 0, len(sums))
	for _, t := range sums {
		out = append(out, t)
	}
	b.cache[w], b.ends[w] = out, day
	return out, day, nil
}

// addArchived books an archived row as the live LogTotals does: by
// store.RowBooksOf, the one reading of a row's markers, so a team-paid row
// counts on its team and a plan-drawn row moves no balance, whether the
// row is read from the database, its rollups or the archive.
func addArchived(sums map[store.LogTotal]store.LogTotal, l store.UsageLog) {
	task, team, quota := store.RowBooksOf(l)
	k := store.LogTotal{UserID: l.UserID, TokenID: l.TokenID, Type: l.Type, Task: task, Team: team}
	t := sums[k]
	t.UserID, t.TokenID, t.Type, t.Task, t.Team = k.UserID, k.TokenID, k.Type, k.Task, k.Team
	t.Rows++
	t.Quota += quota
	sums[k] = t
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
