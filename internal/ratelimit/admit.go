package ratelimit

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Subject is who makes a call, and for which model.
type Subject struct {
	UserID  int64
	TokenID int64
	Group   string
	Model   string
	// TeamID and OrgID are the user's team and its organisation (0: none).
	TeamID int64
	OrgID  int64
}

// Plan is what applies to one call: the subject's rate limits and budgets,
// resolved once from the snapshot. A nil Plan means nothing applies, and
// every method of a nil Plan is a no-op, so the common unlimited call costs
// two map lookups.
type Plan struct {
	s      *Service
	sub    Subject
	token  *Limits
	user   Rate // the user's own limits, each falling back to its group's
	model  ModelRate
	team   Rate
	org    Rate
	budget [maxBudgets]budgetSpec
	nb     int
}

type budgetSpec struct {
	kind   string
	id     int64
	limit  int64
	period string
}

// For resolves what applies to sub; nil when nothing does.
func (s *Service) For(sub Subject) *Plan {
	snap := s.snap.Load()
	tok := snap.tokens[sub.TokenID]
	u := snap.users[sub.UserID]
	g := snap.groups[sub.Group]
	var team, org *Limits
	if sub.TeamID != 0 { // no lookups for the many users in no team
		team, org = snap.teams[sub.TeamID], snap.orgs[sub.OrgID]
	}
	if tok == nil && u == nil && g == nil && team == nil && org == nil {
		return nil
	}
	p := &Plan{s: s, sub: sub, token: tok}
	if u != nil {
		p.user = u.Rate
	}
	if g != nil {
		p.user.RPM = orElse(p.user.RPM, g.RPM)
		p.user.TPM = orElse(p.user.TPM, g.TPM)
		p.user.Concurrency = orElse(p.user.Concurrency, g.Concurrency)
	}
	if tok != nil {
		p.model = tok.ModelLimits[sub.Model]
		if tok.PeriodQuota > 0 && sub.TokenID != 0 {
			p.budget[p.nb] = budgetSpec{store.SubjectToken, sub.TokenID, tok.PeriodQuota, tok.Period}
			p.nb++
		}
	}
	if u != nil && u.PeriodQuota > 0 && sub.UserID != 0 {
		p.budget[p.nb] = budgetSpec{store.SubjectUser, sub.UserID, u.PeriodQuota, u.Period}
		p.nb++
	}
	p.level(store.SubjectTeam, sub.TeamID, team, &p.team)
	p.level(store.SubjectOrg, sub.OrgID, org, &p.org)
	return p
}

// level adds a team's or an organisation's limits: its rates to rate and
// its period budget to the budgets.
func (p *Plan) level(kind string, id int64, l *Limits, rate *Rate) {
	if l == nil || id == 0 {
		return
	}
	*rate = l.Rate
	if l.PeriodQuota > 0 {
		p.budget[p.nb] = budgetSpec{kind, id, l.PeriodQuota, l.Period}
		p.nb++
	}
}

func orElse(own, inherited int64) int64 {
	if own > 0 {
		return own
	}
	return inherited
}

// CountsTokens reports whether a tokens-per-minute limit applies, so the
// caller must size the call exactly.
func (p *Plan) CountsTokens() bool {
	if p == nil {
		return false
	}
	return (p.token != nil && p.token.TPM > 0) || p.user.TPM > 0 || p.model.TPM > 0 || p.team.TPM > 0 || p.org.TPM > 0
}

// HasBudget reports whether a period budget applies.
func (p *Plan) HasBudget() bool { return p != nil && p.nb > 0 }

// maxChecks is the most checks a call can meet: a key's three, its
// model's two, its user's, team's and organisation's three each.
const maxChecks = 14

// checks fills l with the limits that apply, each costing the call one
// request, tokens, or one concurrent slot.
func (p *Plan) checks(l *Lease, tokens int64) {
	add := func(key ckey, scope string, limit int64, gauge, tok bool, cost int64) {
		if limit > 0 {
			l.checks[l.n] = check{key: key, scope: scope, limit: limit, gauge: gauge, tokens: tok, cost: cost}
			l.n++
		}
	}
	if t, id := p.token, p.sub.TokenID; t != nil && id != 0 {
		add(ckey{kind: 't', what: 'r', id: id}, "token", t.RPM, false, false, 1)
		add(ckey{kind: 't', what: 'k', id: id}, "token", t.TPM, false, true, tokens)
		add(ckey{kind: 't', what: 'c', id: id}, "token", t.Concurrency, true, false, 1)
		add(ckey{kind: 'm', what: 'r', id: id, model: p.sub.Model}, "model", p.model.RPM, false, false, 1)
		add(ckey{kind: 'm', what: 'k', id: id, model: p.sub.Model}, "model", p.model.TPM, false, true, tokens)
	}
	if id := p.sub.UserID; id != 0 {
		add(ckey{kind: 'u', what: 'r', id: id}, "user", p.user.RPM, false, false, 1)
		add(ckey{kind: 'u', what: 'k', id: id}, "user", p.user.TPM, false, true, tokens)
		add(ckey{kind: 'u', what: 'c', id: id}, "user", p.user.Concurrency, true, false, 1)
	}
	if id := p.sub.TeamID; id != 0 && p.team != (Rate{}) {
		add(ckey{kind: 'T', what: 'r', id: id}, "team", p.team.RPM, false, false, 1)
		add(ckey{kind: 'T', what: 'k', id: id}, "team", p.team.TPM, false, true, tokens)
		add(ckey{kind: 'T', what: 'c', id: id}, "team", p.team.Concurrency, true, false, 1)
	}
	if id := p.sub.OrgID; id != 0 && p.org != (Rate{}) {
		add(ckey{kind: 'O', what: 'r', id: id}, "org", p.org.RPM, false, false, 1)
		add(ckey{kind: 'O', what: 'k', id: id}, "org", p.org.TPM, false, true, tokens)
		add(ckey{kind: 'O', what: 'c', id: id}, "org", p.org.Concurrency, true, false, 1)
	}
}

// Lease is an admitted call's share of the limits: its tokens are
// corrected at settlement and its concurrency slots given back at the end.
type Lease struct {
	s       *Service
	checks  [maxChecks]check
	reads   [maxChecks]reading
	n       int
	name    string // names the concurrency slots
	minute  int64
	frac    float64
	counted int64
	settled atomic.Bool
	once    sync.Once
}

// Refused is a call over a limit: a 429 in the client's dialect, with the
// Retry-After and rate-limit headers the client should see.
type Refused struct {
	Err        *ir.Error
	RetryAfter time.Duration
	lease      *Lease
}

func (r *Refused) Error() string { return r.Err.Error() }
func (r *Refused) Unwrap() error { return r.Err }

// SetHeaders writes Retry-After (whole seconds, at least 1) and the
// rate-limit headers.
func (r *Refused) SetHeaders(h http.Header) {
	secs := int64(math.Ceil(r.RetryAfter.Seconds()))
	h.Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
	if r.lease != nil {
		r.lease.SetHeaders(h)
	}
}

// Acquire counts the call against every rate limit that applies, or
// refuses it (a *Refused) without counting anything. tokens is the call's
// estimated size (prompt plus the most output it may produce).
func (p *Plan) Acquire(ctx context.Context, tokens int64) (*Lease, error) {
	if p == nil {
		return nil, nil
	}
	l := &Lease{s: p.s, counted: max(tokens, 0)}
	p.checks(l, l.counted)
	if l.n == 0 {
		return nil, nil
	}
	cs := l.checks[:l.n]
	gauges := false
	for i := range cs {
		gauges = gauges || cs[i].gauge
	}
	l.name = p.s.leaseName(gauges)
	now := p.s.Now()
	l.minute, l.frac = minuteOf(now)
	failed, err := p.s.be.acquire(ctx, now, cs, l.reads[:l.n], l.name)
	if err != nil {
		// A limiter that cannot count must not take the gateway down:
		// the call goes through uncounted, and the failure is logged.
		p.s.log.Warn("rate limiter unavailable; admitting uncounted", "err", err)
		return nil, nil
	}
	if failed < 0 {
		return l, nil
	}
	c := &cs[failed]
	p.s.refused(c.scope)
	what := "requests"
	if c.tokens {
		what = "tokens"
	} else if c.gauge {
		what = "concurrent requests"
	}
	retry := retryAfter(c, l.reads[failed], l.frac)
	// The refused call counted nothing: the headers show what is left.
	for i := range cs {
		cs[i].cost = 0
	}
	return nil, &Refused{RetryAfter: retry, lease: l, Err: &ir.Error{Status: 429, Kind: ir.KindRateLimit, Level: level(c.scope),
		Code: "rate_limit_exceeded", Message: fmt.Sprintf("rate limit reached: the %s allows %d %s%s; retry in %d s",
			c.scope, c.limit, what, perMinute(c), max(int64(math.Ceil(retry.Seconds())), 1))}}
}

func perMinute(c *check) string {
	if c.gauge {
		return " at once"
	}
	return " per minute"
}

var (
	requestHeaders = [3]string{"X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests"}
	tokenHeaders   = [3]string{"X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens"}
)

// SetHeaders writes the x-ratelimit headers of the tightest request and
// token limits that apply.
func (l *Lease) SetHeaders(h http.Header) {
	if l == nil {
		return
	}
	for _, tok := range []bool{false, true} {
		best := -1
		var left int64
		for i := range l.n {
			c := &l.checks[i]
			if c.gauge || c.tokens != tok {
				continue
			}
			r := remaining(c, l.reads[i], l.frac)
			if best < 0 || r < left {
				best, left = i, r
			}
		}
		if best < 0 {
			continue
		}
		names := &requestHeaders
		if tok {
			names = &tokenHeaders
		}
		reset := time.Duration((1 - l.frac) * float64(window)).Round(time.Millisecond)
		// Canonical names set directly: the header map is the hot path's
		// only per-call work besides counting.
		h[names[0]] = []string{strconv.FormatInt(l.checks[best].limit, 10)}
		h[names[1]] = []string{strconv.FormatInt(left, 10)}
		h[names[2]] = []string{reset.String()}
	}
}

// Settle corrects the tokens counted at admission to the call's real
// size. It may be called again for a session that bills several answers
// (realtime): later calls add their tokens.
func (l *Lease) Settle(ctx context.Context, tokens int64) {
	if l == nil {
		return
	}
	delta := tokens
	if l.settled.CompareAndSwap(false, true) {
		delta = tokens - l.counted
	}
	if delta == 0 {
		return
	}
	for _, c := range l.checks[:l.n] {
		if c.tokens {
			if err := l.s.be.adjust(ctx, c.key, l.minute, delta); err != nil {
				l.s.log.Warn("rate limiter could not correct a token count", "err", err)
			}
		}
	}
}

// Release gives back the call's concurrency slots and, when it was never
// settled (it failed), the tokens it was counted for. It runs once.
func (l *Lease) Release(ctx context.Context) {
	if l == nil {
		return
	}
	l.once.Do(func() {
		l.Settle(ctx, 0)
		for _, c := range l.checks[:l.n] {
			if c.gauge {
				if err := l.s.be.release(ctx, c.key, l.name); err != nil {
					l.s.log.Warn("rate limiter could not release a concurrency slot", "err", err)
				}
			}
		}
	})
}
