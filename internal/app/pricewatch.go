package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/turnpike-gw/turnpike/internal/admin"
	"github.com/turnpike-gw/turnpike/internal/catalogue"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// priceWatch is the scheduled catalogue check (price_catalogue): it
// compares the catalogue with the prices and announces a difference. It
// never applies one: a price changes only when an administrator says so.
type priceWatch struct {
	cfg    config.PriceCatalogue
	fetch  func(ctx context.Context, url string) ([]byte, error)
	prices store.PriceRepo
	alert  func(ctx context.Context, changed, suspicious int, mark string)
	log    *slog.Logger
}

// checkOnce fetches the catalogue, compares it with the prices and
// announces any change, answering the difference.
func (w *priceWatch) checkOnce(ctx context.Context) (catalogue.Diff, error) {
	raw, err := w.fetch(ctx, w.cfg.URL)
	if err != nil {
		return catalogue.Diff{}, err
	}
	cat, err := catalogue.Parse(raw)
	if err != nil {
		return catalogue.Diff{}, err
	}
	prices, err := w.prices.List(ctx)
	if err != nil {
		return catalogue.Diff{}, err
	}
	d := catalogue.Compare(prices, cat, nil, w.cfg.MaxChangeRatio)
	if len(d.Changed)+len(d.Suspicious) > 0 {
		w.alert(ctx, len(d.Changed), len(d.Suspicious), diffMark(d))
	}
	return d, nil
}

// diffMark names a difference by its content, so each one is announced
// once across nodes and checks.
func diffMark(d catalogue.Diff) string {
	b, _ := json.Marshal([]any{d.Changed, d.Suspicious})
	sum := sha256.Sum256(b)
	return "price_catalogue:" + hex.EncodeToString(sum[:12])
}

// run checks at start and then every interval until ctx ends.
func (w *priceWatch) run(ctx context.Context) {
	t := time.NewTicker(time.Duration(w.cfg.IntervalHours * float64(time.Hour)))
	defer t.Stop()
	for {
		d, err := w.checkOnce(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			w.log.Warn("price catalogue check failed; will retry at the next interval", "err", err)
		case err == nil:
			w.log.Info("price catalogue checked", "changed", len(d.Changed), "suspicious", len(d.Suspicious), "added", len(d.Added))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// fetchCatalogue reads a price catalogue's address as content is read:
// http(s), size-bounded, never an internal address unless
// allow_private_content is on.
func (a *App) fetchCatalogue(ctx context.Context, url string) ([]byte, error) {
	return a.catalogues.Get(ctx, url, admin.MaxCatalogueBytes)
}
