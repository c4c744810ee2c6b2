package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/turnpike-gw/turnpike/internal/admission"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/task/egress"
)

// Submission is a decoded submit a host surface hands to Submit: the
// plugin and model it is for, the caller, and the request as hooks see it.
type Submission struct {
	// Header is the answer's header: rate-limit headers and refusals go
	// there, as on a chat call.
	Header http.Header
	// Table is the routing snapshot the submission pins; nil takes the
	// current one.
	Table      *routing.Table
	Generation *plugin.Generation
	Plugin     *plugin.Loaded
	Principal  *auth.Principal
	Model      string
	Action     string
	// Body is the request body the plugin's decoder chose (ctx.requestBody).
	Body any
	// Headers are the inbound headers hooks see, without credentials.
	Headers map[string]any
	// Files are the references of the request's uploads (ctx.files);
	// Resolver opens them when a descriptor names one.
	Files    []any
	Resolver egress.FileResolver
	// Origins are the caller's own tasks the submit follows up on
	// (OriginTasks); the submit runs on the channel they ran on.
	Origins []*Task
	// Retain keeps the task's result after it ends (retainResult).
	Retain bool
	// Channels, when set, is the plan a host protocol already chose (its
	// first channel decided the plugin); nil plans here.
	Channels []*routing.Channel
	// LogExtra is added to the consume row's other (std_image: images).
	LogExtra map[string]any
}

// submission is a Submission under way.
type submission struct {
	Submission
	// ticket is the submission's standing with traffic control, taken
	// through the admission seam chat calls pass too.
	ticket admission.Ticket
	// price is the model's price, checked on Table.
	price *billing.Price
	// attempts are the channels tried, for the consume row; attemptStart
	// is when the one under way began (the row is written inside it).
	attempts     []admission.Attempt
	attemptStart time.Time
}

// attempt is the state of a submission on one channel.
type attempt struct {
	ch    *routing.Channel
	cr    credentials
	dctx  map[string]any
	model string // upstream model
}

// Submitted is a persisted task plus the full data the submit renderer sees
// even when the stored copy is discarded.
type Submitted struct {
	Task *Task
	Data any
}

// errRetry marks an upstream failure before acceptance: the next channel
// may be tried.
type errRetry struct{ err *ir.Error }

func (e *errRetry) Error() string { return e.err.Error() }

// Submit runs a submission through channel selection, billing and the
// upstream exchange, and persists the accepted task.
func (s *Service) Submit(ctx context.Context, in Submission) (*Submitted, error) {
	sub := &submission{Submission: in}
	t, err := s.begin(ctx, sub)
	if err != nil {
		return nil, err
	}
	price, err := s.gate().Price(sub.Table, sub.Principal, sub.Model)
	if err != nil {
		return nil, err
	}
	sub.price = price
	plan := sub.Channels
	if plan == nil {
		plan = s.plan(sub)
	}
	if len(plan) == 0 {
		return nil, &ir.Error{Status: 503, Kind: ir.KindOverloaded, Code: "model_not_available",
			Message: fmt.Sprintf("no available channel serves model %s for this route", sub.Model)}
	}
	if err := s.gate().Limit(ctx, &sub.ticket, sub.Principal, sub.Model, sub.Header, nil); err != nil {
		return nil, err
	}
	defer sub.ticket.Release(context.WithoutCancel(ctx))
	t.priceVersion = price.Version
	t.BillingKey = store.TaskHoldPrefix + t.PublicID
	var out *Submitted
	aff := s.lookupPin(ctx, sub, sub.keep)
	tries := routing.Attempts{Health: s.d.Router.Health, RetryCount: s.opts.RetryCount, Pin: aff.pinnedKey()}
	judged := func(ch *routing.Channel, e *ir.Error, moveOn bool) {
		if moveOn {
			s.log.WarnContext(ctx, "task submit attempt failed", "channel", ch.ID, "key_index", ch.KeyIndex, "code", e.Code)
		}
	}
	last, exhausted := tries.Try(ctx, plan, nil, func(ch *routing.Channel) error {
		sub.attemptStart = time.Now()
		ch.Begin() // in flight for least_busy, as a chat attempt is
		o, err := s.attemptOn(ctx, sub, t, ch)
		ch.End()
		rec := sub.attemptRecord(ch)
		if err != nil {
			e := ir.As(err)
			rec.Status, rec.ErrorCode = e.Status, e.Code
		}
		sub.attempts = append(sub.attempts, rec)
		if err == nil {
			out = o
			s.servedBy(ctx, aff, ch)
		}
		return err
	}, judged)
	if last == nil && !exhausted {
		return out, nil
	}
	s.refundReservation(ctx, sub, t)
	if last == nil {
		last = &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "upstream_error", Message: "every channel failed"}
	}
	return nil, last
}

// begin pins the routing snapshot and makes the submission's task, once
// the guardrails let its prompt through.
func (s *Service) begin(ctx context.Context, sub *submission) (*Task, error) {
	if sub.Table == nil {
		sub.Table = s.Table()
	}
	t := sub.newTask()
	return t, s.guard(ctx, sub, t)
}

// newTask is the task a submission makes, before it is priced.
func (sub *submission) newTask() *Task {
	return &Task{Task: store.Task{PublicID: newPublicID(), PluginKey: sub.Plugin.Key, PluginVersion: sub.Plugin.Version, Model: sub.Model,
		UserID: sub.Principal.UserID, TokenID: sub.Principal.TokenID, Group: sub.Principal.Group, RetainResult: sub.Retain,
		TeamID: sub.Principal.TeamID, OrgID: sub.Principal.OrgID, TeamPays: sub.Principal.TeamPays}}
}

// attemptRecord is the attempt under way on ch as the usage row lists it,
// served unless the caller says otherwise.
func (sub *submission) attemptRecord(ch *routing.Channel) admission.Attempt {
	return admission.Attempt{ChannelID: ch.ID, KeyIndex: ch.KeyIndex, Status: http.StatusOK,
		LatencyMS: time.Since(sub.attemptStart).Milliseconds()}
}

// servedAttempts is the attempts list of a consume row written inside the
// attempt that served on ch: the earlier ones and this one.
func (sub *submission) servedAttempts(ch *routing.Channel) []admission.Attempt {
	return append(sub.attempts[:len(sub.attempts):len(sub.attempts)], sub.attemptRecord(ch))
}

// attemptOn runs the submission on one channel key: credentials, the
// reservation (taken once, before the first byte goes upstream) and the
// exchange. A failure the next channel may mend carries ir.RetryNext
// (submitError: the channel's policy decides); anything else ends the
// submission.
func (s *Service) attemptOn(ctx context.Context, sub *submission, t *Task, ch *routing.Channel) (*Submitted, error) {
	at, err := s.prepare(ctx, sub, t, ch)
	if err != nil {
		return nil, err
	}
	if t.BillingStatus != BillingHeld {
		if err := s.reserve(ctx, sub, t, at); err != nil {
			return nil, err
		}
	}
	out, err := s.exchange(ctx, sub, t, at)
	var retry *errRetry
	if errors.As(err, &retry) {
		return nil, retry.err
	}
	if err != nil {
		return nil, err
	}
	s.d.Router.Health.SucceededKey(ch, ch.KeyIndex)
	return out, nil
}

// Table is the routing snapshot live now; a host protocol pins one to
// choose its plugin and hands it to Submit.
func (s *Service) Table() *routing.Table { return s.d.Router.Table() }

// RetryCount is how many further channels a submit may try.
func (s *Service) RetryCount() int { return s.opts.RetryCount }

// Plan lists up to n channels of table that serve model for group and that
// keep accepts, healthy ones only, ordered as a chat call's plan is: by
// the model's routing strategy within each priority tier.
func (s *Service) Plan(table *routing.Table, group, model string, n int, keep func(*routing.Channel) bool) []*routing.Channel {
	return table.PlanWith(s.d.Router.Health, s.planOptions(group, model, n, keep))
}

// plan lists the channels to try: those that bind this route's plugin for
// the model and, with origin tasks, only the channel they ran on.
func (s *Service) plan(sub *submission) []*routing.Channel {
	return s.Plan(sub.Table, sub.Principal.Group, sub.Model, s.opts.RetryCount+1, sub.keep)
}

// keep accepts a channel that runs the submission: one binding its
// plugin for the model and, with origin tasks, the channel they ran on.
func (sub *submission) keep(c *routing.Channel) bool {
	if len(sub.Origins) > 0 && c.ID != sub.Origins[0].ChannelID {
		return false
	}
	l, err := sub.Generation.ForChannelModel(&c.Channel, sub.Model)
	return err == nil && l.Key == sub.Plugin.Key
}

// prepare resolves the channel's credentials and builds the driver context.
func (s *Service) prepare(ctx context.Context, sub *submission, t *Task, ch *routing.Channel) (*attempt, error) {
	cr, err := s.credentialsFor(ctx, &ch.Channel, sub.Plugin)
	if err != nil {
		s.log.Warn("task channel credentials unusable", "channel", ch.ID, "err", err)
		return nil, &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "channel_credentials", Message: "the channel's credentials cannot be used", Retry: ir.RetryNext}
	}
	at := &attempt{ch: ch, cr: cr, model: ch.MapModel(sub.Model)}
	var origins []any
	for _, o := range sub.Origins {
		origins = append(origins, originTaskValue(o))
	}
	at.dctx = driverContext(submitInput{requestBody: sub.Body, headers: sub.Headers, action: sub.Action, model: sub.Model,
		upstreamModel: at.model, files: sub.Files, publicID: t.PublicID, originTasks: origins}, &ch.Channel, sub.Plugin, cr)
	return at, nil
}

// reserve validates the final payload, extracts the usage facts and takes
// the estimated charge before anything is sent upstream.
func (s *Service) reserve(ctx context.Context, sub *submission, t *Task, at *attempt) error {
	l := sub.Plugin
	if l.Manifest.Hooks.Has(manifest.HookValidatePreparedRequest) {
		if _, err := call(ctx, l, manifest.HookValidatePreparedRequest, at.dctx, sub.Body); err != nil {
			return hookError(400, "invalid_request", err, at.cr.secrets)
		}
	}
	facts, err := s.submitFacts(ctx, l, at)
	if err != nil {
		return err
	}
	amount, err := s.chargeFor(l, sub.price, sub.Model, at.model, t.Group, facts)
	if err != nil {
		return err
	}
	if _, err := s.gate().Reserve(ctx, context.WithoutCancel(ctx), &sub.ticket, t.account(), t.BillingKey, amount, sub.Header); err != nil {
		return err
	}
	t.ticket, t.QuotaReserved, t.BillingStatus = &sub.ticket, amount, BillingHeld
	t.UsageFacts, _ = json.Marshal(facts)
	return nil
}

func (s *Service) submitFacts(ctx context.Context, l *plugin.Loaded, at *attempt) (map[string]any, error) {
	if !l.Manifest.Hooks.Has(manifest.HookExtractUsage) {
		return map[string]any{}, nil
	}
	uctx := make(map[string]any, len(at.dctx)+1)
	for k, v := range at.dctx {
		uctx[k] = v
	}
	uctx["usagePurpose"] = "facts"
	v, err := call(ctx, l, manifest.HookExtractUsage, uctx)
	if err != nil {
		return nil, hookError(400, "invalid_request", err, at.cr.secrets)
	}
	facts, err := validateFacts(l.Manifest.ProfileFor(at.model, at.dctx["model"].(string)).Schema, v)
	if err != nil {
		return nil, &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "invalid_usage", Message: "the plugin's usage facts are invalid: " + err.Error()}
	}
	return facts, nil
}

// chargeFor prices facts at price for a group in quota units, with the
// pricing function chat calls use.
func (s *Service) chargeFor(l *plugin.Loaded, p *billing.Price, model, upstreamModel, group string, facts map[string]any) (int64, error) {
	cost, err := taskCost(p, l.Manifest.ProfileFor(upstreamModel, model).Schema, facts)
	if err != nil {
		return 0, err
	}
	return s.gate().Quota(p, ir.Usage{}, cost, group)
}

// refundReservation returns a reservation for a submission that never
// became a task: no usage-log row, only the ledger's reserve and refund.
func (s *Service) refundReservation(ctx context.Context, sub *submission, t *Task) {
	if t.BillingStatus != BillingHeld || t.ticket == nil {
		return
	}
	sub.ticket.Refund(context.WithoutCancel(ctx), sub.ticket.Hold, nil)
	t.BillingStatus = BillingRefunded
}
