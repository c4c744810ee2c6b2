package store

import "time"

// RollupSpan is one range a rollup query reads: whole UTC days of the
// daily layer or whole hours of the hourly one, added to the sums or, for
// Less, taken from them.
type RollupSpan struct {
	Since, Until time.Time
	Daily, Less  bool
}

// Spans are the ranges that sum q's whole hours with the fewest buckets:
// the days inside the window from the daily layer, and a day cut by the
// window either as its hours inside it or, when more than half of it is
// inside, as the day's bucket less the hours outside. The database reads
// them all in one statement, so a day and the hours taken from it are of
// one moment even while the billing writer adds to that day.
func (q RollupQuery) Spans() []RollupSpan {
	if !q.Days || q.Granularity == "hour" || !q.Since.Before(q.Until) {
		return []RollupSpan{{Since: q.Since, Until: q.Until}}
	}
	const day = 24 * time.Hour
	var days, hours []RollupSpan
	for d := q.Since.Truncate(day); d.Before(q.Until); d = d.Add(day) {
		in := RollupSpan{Since: later(d, q.Since), Until: earlier(d.Add(day), q.Until)}
		switch whole := in.Until.Sub(in.Since); {
		case whole == day:
		case whole <= day/2:
			hours = append(hours, in)
			continue
		default:
			for _, out := range [2]RollupSpan{{Since: d, Until: in.Since}, {Since: in.Until, Until: d.Add(day)}} {
				if out.Since.Before(out.Until) {
					out.Less = true
					hours = append(hours, out)
				}
			}
		}
		if n := len(days); n > 0 && days[n-1].Until.Equal(d) {
			days[n-1].Until = d.Add(day)
		} else {
			days = append(days, RollupSpan{Since: d, Until: d.Add(day), Daily: true})
		}
	}
	return append(days, hours...)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
