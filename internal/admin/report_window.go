package admin

import (
	"net/http"
	"strconv"
	"time"
)

// reportWindow reads a report's since and until (CONTRACT §14: RFC 3339
// or Unix seconds; the last 24 hours by default).
func reportWindow(r *http.Request, now time.Time) (since, until time.Time, err error) {
	until, since = now, now.Add(-24*time.Hour)
	q := r.URL.Query()
	if v := q.Get("until"); v != "" {
		if until, err = reportTime("until", v); err != nil {
			return
		}
		if q.Get("since") == "" {
			since = until.Add(-24 * time.Hour)
		}
	}
	if v := q.Get("since"); v != "" {
		if since, err = reportTime("since", v); err != nil {
			return
		}
	}
	if !since.Before(until) {
		err = badField("since", "must be before until")
	}
	return
}

func reportTime(name, v string) (time.Time, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 || n > 1<<40 {
			return time.Time{}, badField(name, "must be an RFC 3339 time or Unix seconds")
		}
		return time.Unix(n, 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, badField(name, "must be an RFC 3339 time or Unix seconds")
	}
	return t.UTC(), nil
}
