package config

import (
	"errors"
	"net/url"
)

// PriceCatalogue is the scheduled catalogue check (price_catalogue): every
// IntervalHours the gateway compares the catalogue at URL with its prices
// and sends the price_catalogue_changed alert when they differ. It never
// applies a change by itself.
type PriceCatalogue struct {
	URL           string  `yaml:"url"`
	IntervalHours float64 `yaml:"interval_hours"`
	// MaxChangeRatio is the factor above which a change is suspicious
	// (default 3).
	MaxChangeRatio float64 `yaml:"max_change_ratio"`
}

// Enabled reports whether a schedule is set.
func (p PriceCatalogue) Enabled() bool { return p.URL != "" }

// Validate checks the address and the interval; errors name the field.
func (p PriceCatalogue) Validate() error {
	if !p.Enabled() {
		return nil
	}
	if u, err := url.Parse(p.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("price_catalogue.url must be an http(s) address")
	}
	if p.IntervalHours <= 0 {
		return errors.New("price_catalogue.interval_hours must be positive")
	}
	if p.MaxChangeRatio != 0 && p.MaxChangeRatio <= 1 {
		return errors.New("price_catalogue.max_change_ratio must be above 1")
	}
	return nil
}
