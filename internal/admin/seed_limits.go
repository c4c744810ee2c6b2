package admin

import (
	"context"
	"reflect"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
)

func groupLimits(r config.SeedRate) ratelimit.Limits {
	return ratelimit.Limits{Rate: ratelimit.Rate{RPM: r.RPM, TPM: r.TPM, Concurrency: r.Concurrency}}
}

func userLimits(su config.SeedUser) ratelimit.Limits {
	l := groupLimits(su.SeedRate)
	l.PeriodQuota, l.Period = su.PeriodQuota, su.Period
	return l
}

func tokenLimits(st config.SeedToken) ratelimit.Limits {
	l := groupLimits(st.SeedRate)
	l.PeriodQuota, l.Period = st.PeriodQuota, st.Period
	for m, r := range st.ModelLimits {
		if l.ModelLimits == nil {
			l.ModelLimits = map[string]ratelimit.ModelRate{}
		}
		l.ModelLimits[m] = ratelimit.ModelRate{RPM: r.RPM, TPM: r.TPM}
	}
	return l
}

// seedLimits writes the limits a seed entry states. A group's limits are
// the file's whole word on the group (none stated clears them, as its
// ratio is rewritten); a user or key listed without limits keeps those set
// through the admin API.
func seedLimits(ctx context.Context, d Deps, kind, subject string, l ratelimit.Limits, authoritative bool) error {
	if d.Limits == nil || (l.IsZero() && !authoritative) {
		return nil
	}
	cur := d.Limits.GetSubject(kind, subject)
	if reflect.DeepEqual(cur, l) || (cur.IsZero() && l.IsZero()) {
		return nil
	}
	return d.Limits.Set(ctx, kind, subject, l)
}
