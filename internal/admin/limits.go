package admin

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Limit fields of the admin API (CONTRACT.md §10): rate limits on users,
// keys and groups, model limits on keys, budgets on users and keys.
var (
	rateFields       = []string{"rpm", "tpm", "concurrency"}
	budgetFields     = []string{"period_quota", "period"}
	userLimitFields  = append(append([]string{}, rateFields...), budgetFields...)
	tokenLimitFields = append(append([]string{"model_limits"}, rateFields...), budgetFields...)
)

// limitsView is the traffic-control part of a user or key as the API shows
// it; it is embedded, so its fields sit beside the others.
type limitsView struct {
	RPM             int64                          `json:"rpm"`
	TPM             int64                          `json:"tpm"`
	Concurrency     int64                          `json:"concurrency"`
	ModelLimits     map[string]ratelimit.ModelRate `json:"model_limits,omitempty"`
	PeriodQuota     int64                          `json:"period_quota"`
	Period          *string                        `json:"period"`
	PeriodUsedQuota int64                          `json:"period_used_quota"`
	PeriodResetsAt  *time.Time                     `json:"period_resets_at"`
}

// limitsOf shows a subject's limits and its spending in the current period.
func (a *API) limitsOf(ctx context.Context, kind string, id int64) (limitsView, error) {
	if a.d.Limits == nil {
		return limitsView{}, nil
	}
	l := a.d.Limits.Get(kind, id)
	v := limitsView{RPM: l.RPM, TPM: l.TPM, Concurrency: l.Concurrency, PeriodQuota: l.PeriodQuota}
	if kind == store.SubjectToken {
		v.ModelLimits = l.ModelLimits
		if v.ModelLimits == nil {
			v.ModelLimits = map[string]ratelimit.ModelRate{}
		}
	}
	if l.Period != "" {
		p := l.Period
		v.Period = &p
	}
	st, err := a.d.Limits.Period(ctx, kind, id)
	if err != nil {
		return v, err
	}
	v.PeriodUsedQuota = st.Used
	if st.ResetsAt != nil {
		t := st.ResetsAt.UTC()
		v.PeriodResetsAt = &t
	}
	return v, nil
}

// readLimits applies the limit members of f that were sent to cur. It
// reports whether any was sent; an error names the member.
func readLimits(f fields, cur ratelimit.Limits) (ratelimit.Limits, bool, error) {
	sent := false
	for _, m := range []struct {
		name string
		dst  *int64
	}{{"rpm", &cur.RPM}, {"tpm", &cur.TPM}, {"concurrency", &cur.Concurrency}, {"period_quota", &cur.PeriodQuota}} {
		raw, ok := f[m.name]
		if !ok {
			continue
		}
		sent = true
		if f.isNull(m.name) {
			*m.dst = 0
			continue
		}
		n, err := ratelimit.ParseCount(m.name, raw)
		if err != nil {
			return cur, true, limitError(err)
		}
		*m.dst = n
	}
	if f.has("period") {
		sent = true
		cur.Period = ""
		if !f.isNull("period") {
			if _, err := get(f, "period", &cur.Period); err != nil {
				return cur, true, badField("period", "must be day, week or month")
			}
		}
	}
	if raw, ok := f["model_limits"]; ok {
		sent = true
		m, err := ratelimit.ParseModelLimits(raw)
		if err != nil {
			return cur, true, limitError(err)
		}
		cur.ModelLimits = m
	}
	if !sent {
		return cur, false, nil
	}
	if cur.PeriodQuota == 0 && !f.has("period") {
		cur.Period = ""
	}
	return cur, true, limitError(cur.Validate())
}

func limitError(err error) error {
	var fe *ratelimit.FieldError
	if errors.As(err, &fe) {
		return badField(fe.Field, "%s", fe.Msg)
	}
	return err
}

// saveLimits stores a subject's limits when the request sent any.
func (a *API) saveLimits(ctx context.Context, kind string, id int64, l ratelimit.Limits, sent bool) error {
	if !sent || a.d.Limits == nil {
		return nil
	}
	return a.d.Limits.Set(ctx, kind, strconv.FormatInt(id, 10), l)
}

// currentLimits is what a subject has now, for a PATCH to change.
func (a *API) currentLimits(kind string, id int64) ratelimit.Limits {
	if a.d.Limits == nil {
		return ratelimit.Limits{}
	}
	return a.d.Limits.Get(kind, id)
}

// forgetLimits drops a deleted subject's limits.
func (a *API) forgetLimits(ctx context.Context, kind, subject string) {
	if a.d.Limits == nil {
		return
	}
	if err := a.d.Limits.Forget(ctx, kind, subject); err != nil {
		a.log.Warn("limits of a deleted subject were not removed", "kind", kind, "subject", subject, "err", err)
	}
}

// groupView is a group with its rate limits.
type groupView struct {
	Name        string  `json:"name"`
	Ratio       float64 `json:"ratio"`
	RPM         int64   `json:"rpm"`
	TPM         int64   `json:"tpm"`
	Concurrency int64   `json:"concurrency"`
	// LogContent is the group's content logging (null: off).
	LogContent *store.ContentLogging `json:"log_content"`
}

func (a *API) groupView(g store.Group) groupView {
	v := groupView{Name: g.Name, Ratio: g.Ratio, LogContent: g.LogContent}
	if a.d.Limits != nil {
		r := a.d.Limits.Group(g.Name)
		v.RPM, v.TPM, v.Concurrency = r.RPM, r.TPM, r.Concurrency
	}
	return v
}

// readGroupLimits reads a group's rate limits from f over cur.
func readGroupLimits(f fields, cur ratelimit.Rate) (ratelimit.Limits, bool, error) {
	l, sent, err := readLimits(f, ratelimit.Limits{Rate: cur})
	return ratelimit.Limits{Rate: l.Rate}, sent, err
}

func (v groupView) rate() ratelimit.Rate {
	return ratelimit.Rate{RPM: v.RPM, TPM: v.TPM, Concurrency: v.Concurrency}
}
