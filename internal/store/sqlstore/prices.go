package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type priceRepo struct{ s *Store }

var priceColumns = []string{"input_per_mtok", "output_per_mtok", "cache_read_per_mtok", "cache_write_per_mtok", "per_call", "is_free", "extra", "updated_at", "fallbacks",
	"reasoning_per_mtok", "tiers", "routing"}

const priceSelect = "SELECT name, input_per_mtok, output_per_mtok, cache_read_per_mtok, cache_write_per_mtok, per_call, is_free, extra, updated_at, fallbacks, " +
	"reasoning_per_mtok, tiers, routing FROM model_prices"

func scanPrice(row interface{ Scan(...any) error }) (store.ModelPrice, error) {
	var p store.ModelPrice
	var extra, fallbacks, tiers, routing sql.NullString
	err := row.Scan(&p.Name, &p.InputPerMTok, &p.OutputPerMTok, &p.CacheReadPerMTok, &p.CacheWritePerMTok, &p.PerCall, &p.Free, &extra, &p.UpdatedAt, &fallbacks,
		&p.ReasoningPerMTok, &tiers, &routing)
	p.Extra = rawFrom(extra)
	if err == nil && tiers.Valid && tiers.String != "" {
		if err = json.Unmarshal([]byte(tiers.String), &p.Tiers); err != nil {
			err = fmt.Errorf("decode tiers of %s: %w", p.Name, err)
		}
		if len(p.Tiers) == 0 {
			p.Tiers = nil // none is stored as NULL and read back as nil
		}
	}
	if err == nil && fallbacks.Valid && fallbacks.String != "" {
		p.Fallbacks, err = decodeList(fallbacks.String)
		if len(p.Fallbacks) == 0 {
			p.Fallbacks = nil // as the seed file leaves it, so comparisons agree
		}
	}
	if err == nil && routing.Valid && routing.String != "" {
		var rc priceRouting
		if err = json.Unmarshal([]byte(routing.String), &rc); err != nil {
			err = fmt.Errorf("decode routing of %s: %w", p.Name, err)
		}
		p.Affinity, p.Routing = rc.Affinity, rc.Routing
	}
	p.UpdatedAt = p.UpdatedAt.UTC()
	return p, err
}

// priceRouting is the routing column: a model's routing choices, kept in
// one JSON object because they are read together and never queried.
type priceRouting struct {
	Affinity *store.Affinity      `json:"affinity,omitempty"`
	Routing  *store.RoutingChoice `json:"routing,omitempty"`
}

// Upsert stores p, stamping UpdatedAt with the current time when it is zero.
func (r priceRepo) Upsert(ctx context.Context, p store.ModelPrice) error {
	fallbacks, err := stringList(p.Fallbacks)
	if err != nil {
		return wrap(err, "upsert price")
	}
	var tiers any // NULL when the price has none
	if len(p.Tiers) > 0 {
		if tiers, err = jsonText(p.Tiers); err != nil {
			return wrap(err, "upsert price")
		}
	}
	var routing any // NULL when the model keeps the defaults
	if p.Affinity != nil || p.Routing != nil {
		if routing, err = jsonText(priceRouting{p.Affinity, p.Routing}); err != nil {
			return wrap(err, "upsert price")
		}
	}
	_, err = r.s.db.ExecContext(ctx, r.s.upsertSQL("model_prices", "name", priceColumns),
		p.Name, p.InputPerMTok, p.OutputPerMTok, p.CacheReadPerMTok, p.CacheWritePerMTok, p.PerCall, p.Free,
		rawText(p.Extra), orNow(p.UpdatedAt), fallbacks, p.ReasoningPerMTok, tiers, routing)
	return wrap(err, "upsert price")
}

func (r priceRepo) Get(ctx context.Context, name string) (*store.ModelPrice, error) {
	p, err := scanPrice(r.s.db.QueryRowContext(ctx, r.s.Rebind(priceSelect+" WHERE name = ?"), name))
	if err != nil {
		return nil, wrap(err, "get price")
	}
	return &p, nil
}

func (r priceRepo) List(ctx context.Context) ([]store.ModelPrice, error) {
	rows, err := r.s.db.QueryContext(ctx, priceSelect+" ORDER BY name")
	if err != nil {
		return nil, wrap(err, "list prices")
	}
	out, err := collect(rows, scanPrice)
	return out, wrap(err, "list prices")
}

func (r priceRepo) Delete(ctx context.Context, name string) error {
	return r.s.execOne(ctx, r.s.db, "delete price", "DELETE FROM model_prices WHERE name = ?", name)
}
