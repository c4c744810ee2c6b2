package store

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestSpansReadACutDayAsItsHoursOrAsTheDayLessTheRest(t *testing.T) {
	at := func(d, h int) time.Time { return time.Date(2026, 5, d, h, 0, 0, 0, time.UTC) }
	cases := []struct {
		name         string
		since, until time.Time
		gran         string
		days         bool
		want         string
	}{
		{"whole days are one daily span", at(1, 0), at(4, 0), "day", true, "day 01T00-04T00"},
		{"a 23-hour first day is the day less its first hour", at(1, 1), at(4, 0), "day", true,
			"day 01T00-04T00, less 01T00-01T01"},
		{"a 16-hour last day is the day less its last 8", at(1, 0), at(3, 16), "", true,
			"day 01T00-04T00, less 03T16-04T00"},
		{"a short cut day is its hours", at(1, 20), at(3, 5), "day", true,
			"day 02T00-03T00, hours 01T20-02T00, hours 03T00-03T05"},
		{"inside one day, mostly: the day less both ends", at(2, 3), at(2, 22), "day", true,
			"day 02T00-03T00, less 02T00-02T03, less 02T22-03T00"},
		{"inside one day, briefly: its hours", at(2, 3), at(2, 9), "day", true, "hours 02T03-02T09"},
		{"per hour reads only hours", at(1, 1), at(4, 0), "hour", true, "hours 01T01-04T00"},
		{"without days only hours", at(1, 0), at(4, 0), "day", false, "hours 01T00-04T00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := RollupQuery{Since: c.since, Until: c.until, Granularity: c.gran, Days: c.days}
			var got []string
			for _, s := range q.Spans() {
				kind := "hours"
				switch {
				case s.Daily:
					kind = "day"
				case s.Less:
					kind = "less"
				}
				got = append(got, fmt.Sprintf("%s %s-%s", kind, s.Since.Format("02T15"), s.Until.Format("02T15")))
			}
			if strings.Join(got, ", ") != c.want {
				t.Fatalf("spans\n got %s\nwant %s", strings.Join(got, ", "), c.want)
			}
		})
	}
}
