// Package books is the operator's books over the gateway's records: the
// margin of what was charged over what the calls cost upstream, the
// reconciliation that proves the ledger, the usage rows and the balances
// agree, and the comparison of a channel's rows with the provider's own
// usage export. It reads the store and never moves money.
package books

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// DefaultWindow is the span a report covers when it is given no since.
const DefaultWindow = 24 * time.Hour

// ParseWindow reads a report's since and until (RFC 3339 or Unix seconds;
// empty until is now, empty since is DefaultWindow before until).
func ParseWindow(since, until string, now time.Time) (store.Window, error) {
	w := store.Window{Until: now.UTC()}
	var err error
	if until != "" {
		if w.Until, err = parseTime("until", until); err != nil {
			return w, err
		}
	}
	w.Since = w.Until.Add(-DefaultWindow)
	if since != "" {
		if w.Since, err = parseTime("since", since); err != nil {
			return w, err
		}
	}
	if !w.Since.Before(w.Until) {
		return w, fmt.Errorf("since must be before until")
	}
	return w, nil
}

func parseTime(name, v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Unix(n, 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s must be an RFC 3339 time (2026-01-02T15:04:05Z) or Unix seconds", name)
	}
	return t.UTC(), nil
}
