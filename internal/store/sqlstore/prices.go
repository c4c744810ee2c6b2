package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

type priceRepo struct{ s *Store }

var priceColumns = []string{"input_per_mtok", "output_per_mtok", "cache_read_per_mtok", "cache_write_per_mtok", "per_call", "is_free", "extra", "updated_at", "fallbacks",
	"reasoning_per_mtok", "tiers", "batch_input_per_mtok", "batch_output_per_mtok", "routing"}

const priceSelect = "SELECT name, input_per_mtok, output_per_mtok, cache_read_per_mtok, cache_write_per_mtok, per_call, is_free, extra, updated_at, fallbacks, " +
	"reasoning_per_mtok, tiers, batch_input_per_mtok, batch_output_per_mtok, routing FROM model_prices"

func scanPrice(row interface{ Scan(...any) error }) (store.ModelPrice, error) {
	var p store.ModelPrice
	var extra, fallbacks, tiers, routing sql.NullString
	err := row.Scan(&p.Name, &p.InputPerMTok, &p.OutputPerMTok, &p.CacheReadPerMTok, &p.CacheWritePerMTok, &p.PerCall, &p.Free, &extra, &p.UpdatedAt, &fallbacks,
		&p.ReasoningPerMTok, &tiers, &p.BatchInputPerMTok, &p.BatchOutputPerMTok, &routing)
	p.Extra = rawFrom(extra)
	if err == nil {
		p.Tiers, err = decodeTiers(p.Name, tiers)
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
		p.Affinity, p.Routing, p.ResponseCache, p.StreamFailover = rc.Affinity, rc.Routing, rc.ResponseCache, rc.StreamFailover
	}
	p.UpdatedAt = p.UpdatedAt.UTC()
	return p, err
}

// decodeTiers reads a tiers column; none is stored as NULL and read back
// as nil.
func decodeTiers(model string, tiers sql.NullString) ([]store.PriceTier, error) {
	if !tiers.Valid || tiers.String == "" {
		return nil, nil
	}
	var out []store.PriceTier
	if err := json.Unmarshal([]byte(tiers.String), &out); err != nil {
		return nil, fmt.Errorf("decode tiers of %s: %w", model, err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// tiersText is the tiers column of tiers: NULL when there are none.
func tiersText(tiers []store.PriceTier) (any, error) {
	if len(tiers) == 0 {
		return nil, nil
	}
	return jsonText(tiers)
}

// versionInsertAttempts bounds the reruns of an Upsert whose version number
// another writer took first.
const versionInsertAttempts = 10

// priceRouting is the routing column: a model's routing choices, kept in
// one JSON object because they are read together and never queried.
// The response cache and stream failover live here too: they are how the
// model's calls are served, read with the price, and never queried.
type priceRouting struct {
	Affinity       *store.Affinity      `json:"affinity,omitempty"`
	Routing        *store.RoutingChoice `json:"routing,omitempty"`
	ResponseCache  *store.ResponseCache `json:"response_cache,omitempty"`
	StreamFailover bool                 `json:"stream_failover,omitempty"`
}

// Upsert adds p as the model's next version and writes the model's row.
// The row holds the last version written (also one effective later); Get
// and List answer the version in effect.
func (r priceRepo) Upsert(ctx context.Context, p store.ModelPrice) error {
	fallbacks, err := stringList(p.Fallbacks)
	if err != nil {
		return wrap(err, "upsert price")
	}
	tiers, err := tiersText(p.Tiers)
	if err != nil {
		return wrap(err, "upsert price")
	}
	var routing any // NULL when the model keeps the defaults
	if p.Affinity != nil || p.Routing != nil || p.ResponseCache != nil || p.StreamFailover {
		if routing, err = jsonText(priceRouting{p.Affinity, p.Routing, p.ResponseCache, p.StreamFailover}); err != nil {
			return wrap(err, "upsert price")
		}
	}
	at := now()
	from := at
	if !p.EffectiveFrom.IsZero() {
		from = dbTime(p.EffectiveFrom)
	}
	source := p.Source
	if source == "" {
		source = store.PriceSourceAPI
	}
	for attempt := 1; ; attempt++ {
		err = r.s.withTx(ctx, func(tx *sql.Tx) error {
			var last int64
			if err := tx.QueryRowContext(ctx, r.s.Rebind("SELECT COALESCE(MAX(version), 0) FROM model_price_versions WHERE model = ?"),
				p.Name).Scan(&last); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, r.s.Rebind(`INSERT INTO model_price_versions (model, version, effective_from,
				input_per_mtok, output_per_mtok, cache_read_per_mtok, cache_write_per_mtok, reasoning_per_mtok,
				batch_input_per_mtok, batch_output_per_mtok, per_call, is_free, tiers, extra, source, actor, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
				p.Name, last+1, from, p.InputPerMTok, p.OutputPerMTok, p.CacheReadPerMTok, p.CacheWritePerMTok, p.ReasoningPerMTok,
				p.BatchInputPerMTok, p.BatchOutputPerMTok, p.PerCall, p.Free, tiers, rawText(p.Extra), source, p.Actor, at); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, r.s.upsertSQL("model_prices", "name", priceColumns),
				p.Name, p.InputPerMTok, p.OutputPerMTok, p.CacheReadPerMTok, p.CacheWritePerMTok, p.PerCall, p.Free,
				rawText(p.Extra), orNow(p.UpdatedAt), fallbacks, p.ReasoningPerMTok, tiers, p.BatchInputPerMTok, p.BatchOutputPerMTok, routing)
			return err
		})
		if err == nil || classify(err) != classUnique || attempt == versionInsertAttempts {
			return wrap(err, "upsert price")
		}
	}
}

func (r priceRepo) Get(ctx context.Context, name string) (*store.ModelPrice, error) {
	if err := r.adoptLegacyPrices(ctx); err != nil {
		return nil, err
	}
	p, err := scanPrice(r.s.db.QueryRowContext(ctx, r.s.Rebind(priceSelect+" WHERE name = ?"), name))
	if err != nil {
		return nil, wrap(err, "get price")
	}
	vs, err := r.history(ctx, name)
	if err != nil {
		return nil, err
	}
	p = inEffectOn(p, vs, time.Now())
	return &p, nil
}

func (r priceRepo) List(ctx context.Context) ([]store.ModelPrice, error) {
	if err := r.adoptLegacyPrices(ctx); err != nil {
		return nil, err
	}
	rows, err := r.s.db.QueryContext(ctx, priceSelect+" ORDER BY name")
	if err != nil {
		return nil, wrap(err, "list prices")
	}
	out, err := collect(rows, scanPrice)
	if err != nil {
		return nil, wrap(err, "list prices")
	}
	vs, err := r.Versions(ctx)
	if err != nil {
		return nil, err
	}
	byModel := map[string][]store.PriceVersion{}
	for _, v := range vs {
		byModel[v.Model] = append(byModel[v.Model], v)
	}
	at := time.Now()
	for i := range out {
		out[i] = inEffectOn(out[i], byModel[out[i].Name], at)
	}
	return out, nil
}

// inEffectOn is row with the version of vs in effect at at, or the
// earliest while none is; a row without versions (written before they
// existed) stays as it is.
func inEffectOn(row store.ModelPrice, vs []store.PriceVersion, at time.Time) store.ModelPrice {
	if v, ok := store.InEffect(vs, at); ok {
		return v.On(row)
	}
	if v, ok := earliest(vs); ok {
		return v.On(row)
	}
	return row
}

func earliest(vs []store.PriceVersion) (v store.PriceVersion, ok bool) {
	for _, c := range vs {
		if !ok || c.EffectiveFrom.Before(v.EffectiveFrom) {
			v, ok = c, true
		}
	}
	return v, ok
}

func (r priceRepo) Delete(ctx context.Context, name string) error {
	return r.s.execOne(ctx, r.s.db, "delete price", "DELETE FROM model_prices WHERE name = ?", name)
}

const versionSelect = `SELECT v.model, v.version, v.effective_from, v.input_per_mtok, v.output_per_mtok, v.cache_read_per_mtok,
	v.cache_write_per_mtok, v.reasoning_per_mtok, v.batch_input_per_mtok, v.batch_output_per_mtok, v.per_call, v.is_free,
	v.tiers, v.extra, v.source, v.actor, v.created_at FROM model_price_versions v`

func scanPriceVersion(row interface{ Scan(...any) error }) (store.PriceVersion, error) {
	var v store.PriceVersion
	var tiers, extra sql.NullString
	err := row.Scan(&v.Model, &v.Version, &v.EffectiveFrom, &v.InputPerMTok, &v.OutputPerMTok, &v.CacheReadPerMTok,
		&v.CacheWritePerMTok, &v.ReasoningPerMTok, &v.BatchInputPerMTok, &v.BatchOutputPerMTok, &v.PerCall, &v.Free,
		&tiers, &extra, &v.Source, &v.Actor, &v.CreatedAt)
	if err != nil {
		return v, err
	}
	v.EffectiveFrom, v.CreatedAt = v.EffectiveFrom.UTC(), v.CreatedAt.UTC()
	v.Extra = rawFrom(extra)
	v.Tiers, err = decodeTiers(v.Model, tiers)
	return v, err
}

func (r priceRepo) History(ctx context.Context, name string) ([]store.PriceVersion, error) {
	if err := r.adoptLegacyPrices(ctx); err != nil {
		return nil, err
	}
	return r.history(ctx, name)
}

func (r priceRepo) history(ctx context.Context, name string) ([]store.PriceVersion, error) {
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind(versionSelect+" WHERE v.model = ? ORDER BY v.version DESC"), name)
	if err != nil {
		return nil, wrap(err, "price history")
	}
	out, err := collect(rows, scanPriceVersion)
	return out, wrap(err, "price history")
}

func (r priceRepo) Versions(ctx context.Context) ([]store.PriceVersion, error) {
	rows, err := r.s.db.QueryContext(ctx, versionSelect+" JOIN model_prices p ON p.name = v.model ORDER BY v.model, v.version")
	if err != nil {
		return nil, wrap(err, "price versions")
	}
	out, err := collect(rows, scanPriceVersion)
	return out, wrap(err, "price versions")
}

// Revision first adopts what an older release wrote (see pricelegacy.go),
// so a price changed on an older node moves the revision every node polls.
func (r priceRepo) Revision(ctx context.Context) (store.PriceRevision, error) {
	if err := r.adoptLegacyPrices(ctx); err != nil {
		return store.PriceRevision{}, err
	}
	var rev store.PriceRevision
	err := r.s.pollQueryRow(ctx, "SELECT (SELECT COALESCE(MAX(id), 0) FROM model_price_versions), (SELECT COUNT(*) FROM model_prices)").
		Scan(&rev.LastVersion, &rev.Models)
	return rev, wrap(err, "price revision")
}
