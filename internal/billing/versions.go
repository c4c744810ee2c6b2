package billing

import (
	"sort"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// priceLines prepares every version of each priced model (rows), ordered
// by when it takes effect and, among versions taking effect together, by
// number, so the last one not after a moment is the one in effect then. A
// row without versions (written before there were any) is in effect always.
func priceLines(rows []store.ModelPrice, versions []store.PriceVersion) map[string][]*Price {
	byModel := make(map[string][]store.PriceVersion, len(rows))
	for _, v := range versions {
		byModel[v.Model] = append(byModel[v.Model], v)
	}
	lines := make(map[string][]*Price, len(rows))
	for _, row := range rows {
		vs := byModel[row.Name]
		if len(vs) == 0 {
			row.EffectiveFrom = time.Time{}
			lines[row.Name] = []*Price{NewPrice(row)}
			continue
		}
		sort.Slice(vs, func(i, j int) bool {
			if !vs[i].EffectiveFrom.Equal(vs[j].EffectiveFrom) {
				return vs[i].EffectiveFrom.Before(vs[j].EffectiveFrom)
			}
			return vs[i].Version < vs[j].Version
		})
		line := make([]*Price, len(vs))
		for i, v := range vs {
			line[i] = NewPrice(v.On(row))
		}
		lines[row.Name] = line
	}
	return lines
}

// inEffect is the version of line in effect at at, nil before the first.
func inEffect(line []*Price, at time.Time) *Price {
	for i := len(line) - 1; i >= 0; i-- {
		if !line[i].EffectiveFrom.After(at) {
			return line[i]
		}
	}
	return nil
}
