package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Releases before the price versions (schema 122) read and write a model's
// price on its model_prices row only. During a rolling upgrade such a node
// runs beside new ones on the migrated database, so the row stays a write
// path (expand, then contract later): every price this release writes goes
// to its version and to the row in one transaction, and a row that differs
// from its model's newest version can only have been written by an older
// release. adoptLegacyPrices turns each such row into the model's next
// version, in effect from when the older node wrote it, so every node
// charges the price the administrator set last, whichever node took it.

// PriceSourceOlderRelease is the actor of a version adopted from a row an
// older release wrote.
const priceActorOlderRelease = "older release"

// legacyPriceDiff finds the rows that differ from their newest version (or
// have none). Only the columns every release writes are compared; the
// columns an older release does not know keep what the newer one wrote.
const legacyPriceDiff = `SELECT p.name, p.updated_at, p.input_per_mtok, p.output_per_mtok, p.cache_read_per_mtok,
	p.cache_write_per_mtok, p.reasoning_per_mtok, p.batch_input_per_mtok, p.batch_output_per_mtok, p.per_call, p.is_free,
	p.tiers, p.extra, COALESCE(l.version, 0), l.effective_from
FROM model_prices p LEFT JOIN model_price_versions l
	ON l.model = p.name AND l.version = (SELECT MAX(m.version) FROM model_price_versions m WHERE m.model = p.name)
WHERE l.model IS NULL OR p.input_per_mtok <> l.input_per_mtok OR p.output_per_mtok <> l.output_per_mtok
	OR p.cache_read_per_mtok <> l.cache_read_per_mtok OR p.cache_write_per_mtok <> l.cache_write_per_mtok
	OR p.reasoning_per_mtok <> l.reasoning_per_mtok OR p.per_call <> l.per_call OR p.is_free <> l.is_free
	OR COALESCE(p.tiers, '') <> COALESCE(l.tiers, '')`

type legacyPrice struct {
	v    store.PriceVersion
	last int64
	tier sql.NullString
	ext  sql.NullString
	// lastFrom is when the newest version took (or takes) effect.
	lastFrom sql.NullTime
}

// adoptLegacyPrices records every row an older release changed as a new
// version. Nodes may race to adopt the same row: the version number is
// unique per model, so the loser's insert fails and is ignored.
func (r priceRepo) adoptLegacyPrices(ctx context.Context) error {
	rows, err := r.s.pollQuery(ctx, legacyPriceDiff)
	if err != nil {
		return wrap(err, "adopt older prices")
	}
	found, err := collect(rows, func(row interface{ Scan(...any) error }) (legacyPrice, error) {
		var lp legacyPrice
		v := &lp.v
		err := row.Scan(&v.Model, &v.EffectiveFrom, &v.InputPerMTok, &v.OutputPerMTok, &v.CacheReadPerMTok,
			&v.CacheWritePerMTok, &v.ReasoningPerMTok, &v.BatchInputPerMTok, &v.BatchOutputPerMTok, &v.PerCall, &v.Free,
			&lp.tier, &lp.ext, &lp.last, &lp.lastFrom)
		return lp, err
	})
	if err != nil {
		return wrap(err, "adopt older prices")
	}
	for _, lp := range found {
		if err := r.adoptOne(ctx, lp); err != nil && classify(err) != classUnique {
			return wrap(err, "adopt older price")
		}
	}
	return nil
}

func (r priceRepo) adoptOne(ctx context.Context, lp legacyPrice) error {
	v := lp.v
	// In effect from when the older node wrote it, and never before the
	// version it replaces (a tie goes to the higher version).
	from := v.EffectiveFrom
	if from.IsZero() || from.After(time.Now()) {
		from = now()
	}
	if last := lp.lastFrom.Time; lp.lastFrom.Valid && last.After(from) && !last.After(time.Now()) {
		from = last
	}
	_, err := r.s.db.ExecContext(ctx, r.s.Rebind(`INSERT INTO model_price_versions (model, version, effective_from,
		input_per_mtok, output_per_mtok, cache_read_per_mtok, cache_write_per_mtok, reasoning_per_mtok,
		batch_input_per_mtok, batch_output_per_mtok, per_call, is_free, tiers, extra, source, actor, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		v.Model, lp.last+1, dbTime(from), v.InputPerMTok, v.OutputPerMTok, v.CacheReadPerMTok, v.CacheWritePerMTok,
		v.ReasoningPerMTok, v.BatchInputPerMTok, v.BatchOutputPerMTok, v.PerCall, v.Free, lp.tier, lp.ext,
		store.PriceSourceAPI, priceActorOlderRelease, now())
	return err
}
