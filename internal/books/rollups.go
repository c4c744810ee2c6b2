package books

import (
	"context"
	"math/big"
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// sumKey is one line of a summed window: group, period (Unix seconds) and
// type.
type sumKey struct {
	group  string
	period int64
	typ    string
}

// sums is a window's lines as they are added up.
type sums map[sumKey]*store.RollupLine

func (s sums) add(k sumKey, v store.RollupSums, cost *big.Int) {
	l := s[k]
	if l == nil {
		l = &store.RollupLine{Group: k.group, Type: k.typ, UpstreamCost: new(big.Int)}
		if k.period != (time.Time{}).Unix() {
			l.Period = time.Unix(k.period, 0).UTC()
		}
		s[k] = l
	}
	l.RollupSums.Add(v)
	l.UpstreamCost.Add(l.UpstreamCost, cost)
}

// SumWindow adds up the usage rows of w by q's dimension, granularity,
// filters and type, exactly: the whole hours inside w from the rollups in
// one statement (the daily layer where the granularity allows, see
// store.RollupQuery.Spans), the parts of an hour at w's edges from the
// rows themselves. Until every row is in the rollups (the backfill after an
// upgrade or an import) it reads the rows of the whole window.
func SumWindow(ctx context.Context, st store.Store, w store.Window, q store.RollupQuery) ([]store.RollupLine, error) {
	ready, err := st.Rollups().Ready(ctx)
	if err != nil {
		return nil, err
	}
	from, to := ceil(w.Since, time.Hour), w.Until.Truncate(time.Hour)
	edges := []store.Window{w}
	var lines []store.RollupLine
	if ready && from.Before(to) {
		edges = []store.Window{{Since: w.Since, Until: from}, {Since: to, Until: w.Until}}
		part := q
		part.Since, part.Until, part.Days = from, to, q.Granularity != "hour"
		if lines, err = st.Rollups().Sum(ctx, part); err != nil {
			return nil, err
		}
	}
	raw := sums{}
	for _, e := range edges {
		if !e.Since.Before(e.Until) {
			continue
		}
		err := st.Books().EachLog(ctx, e, q.Types, func(l store.UsageLog) error {
			k, v := store.RollupOf(l)
			if q.Keeps(k) {
				raw.add(sumKey{dimValue(k, q.GroupBy), periodOf(k.Hour, q.Granularity).Unix(), k.Type}, v, big.NewInt(v.UpstreamCostPico))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return raw.into(lines), nil
}

// into adds the edges' sums to the rollups' lines, which have one line per
// key already: the edges are a few hundred keys where a window's lines are
// up to tens of thousands (the usage report by key), so each line is looked
// up, not copied into a map of its own.
func (s sums) into(lines []store.RollupLine) []store.RollupLine {
	if len(s) == 0 {
		return lines
	}
	for i := range lines {
		l := &lines[i]
		k := sumKey{l.Group, l.Period.Unix(), l.Type}
		if e := s[k]; e != nil {
			l.RollupSums.Add(e.RollupSums)
			l.UpstreamCost.Add(l.UpstreamCost, e.UpstreamCost)
			delete(s, k)
		}
	}
	for _, e := range s {
		lines = append(lines, *e)
	}
	return lines
}

// ceil is t rounded up to a whole multiple of d (UTC hours and days).
func ceil(t time.Time, d time.Duration) time.Time {
	c := t.Truncate(d)
	if c.Before(t) {
		c = c.Add(d)
	}
	return c
}

// periodOf is the period an hour falls in at a granularity.
func periodOf(hour time.Time, granularity string) time.Time {
	switch granularity {
	case "hour":
		return hour
	case "day":
		return hour.Truncate(24 * time.Hour)
	}
	return time.Time{}
}

// dimValue is a bucket's value of one dimension, as the rollups' query
// answers it.
func dimValue(k store.RollupKey, dim string) string {
	switch dim {
	case store.DimUser:
		return strconv.FormatInt(k.UserID, 10)
	case store.DimToken:
		return strconv.FormatInt(k.TokenID, 10)
	case store.DimModel:
		return k.Model
	case store.DimChannel:
		return strconv.FormatInt(k.ChannelID, 10)
	case store.DimTeam:
		return strconv.FormatInt(k.TeamID, 10)
	}
	return ""
}

// picoUSD is an exact dollar amount of 10⁻¹² dollars.
func picoUSD(n *big.Int) *big.Rat { return new(big.Rat).SetFrac(n, big.NewInt(1_000_000_000_000)) }
