package task

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/admission"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/plugin/manifest"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// taskPricing is the task-specific part of a model price, kept in its
// extra JSON: a rate per unit of a usage fact, in US dollars.
type taskPricing struct {
	PerUnit map[string]float64 `json:"per_unit"`
}

func priceError(model, format string, args ...any) *ir.Error {
	return &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "model_price_error",
		Message: fmt.Sprintf("model %s: ", model) + fmt.Sprintf(format, args...)}
}

// taskCost prices one task: per unit of the usage facts when the price has
// per_unit rates (plus any per-call part), else per call. A model that is
// neither free nor priced in one of those ways cannot be billed.
func taskCost(p *billing.Price, schema manifest.UsageSchema, facts map[string]any) (*big.Rat, error) {
	if p.Free {
		return new(big.Rat), nil
	}
	var tp taskPricing
	if len(p.Raw.Extra) > 0 {
		if err := json.Unmarshal(p.Raw.Extra, &tp); err != nil {
			return nil, priceError(p.Name, "the task price in extra is not valid JSON")
		}
	}
	cost := p.CallCost(1)
	if len(tp.PerUnit) == 0 {
		if cost.Sign() == 0 {
			return nil, priceError(p.Name, "no per-call or per-unit task price is set")
		}
		return cost, nil
	}
	keys := make([]string, 0, len(tp.PerUnit))
	for k := range tp.PerUnit {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f, ok := schema[k]
		if !ok || f.Type != "number" {
			return nil, priceError(p.Name, "per_unit names %q, which is not a number fact of the plugin's usage schema", k)
		}
		n, _ := manifest.Number(facts[k])
		if n > maxUsageFact {
			// Facts are checked when they arrive; this guards facts that
			// reach pricing another way (a stored row from before the bound).
			return nil, priceError(p.Name, "usage fact %q is %g, above the largest accepted value %g", k, n, float64(maxUsageFact))
		}
		rate, _ := new(big.Rat).SetString(strconv.FormatFloat(tp.PerUnit[k], 'f', -1, 64))
		units, _ := new(big.Rat).SetString(strconv.FormatFloat(n, 'f', -1, 64))
		if rate == nil || units == nil {
			continue
		}
		cost.Add(cost, units.Mul(units, rate))
	}
	return cost, nil
}

// validateFacts checks usage facts against the selected schema (SPEC §4.2
// rule 3): known keys only, each of its field's kind. Missing facts are
// allowed; they price as zero.
func validateFacts(schema manifest.UsageSchema, v any) (map[string]any, error) {
	if v == nil {
		return map[string]any{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("usage facts must be an object")
	}
	out := make(map[string]any, len(m))
	for k, val := range m {
		f, ok := schema[k]
		if !ok {
			return nil, fmt.Errorf("usage fact %q is not in the usage schema", k)
		}
		if err := checkFact(f, k, val); err != nil {
			return nil, err
		}
		out[k] = val
	}
	return out, nil
}

// maxUsageFact bounds a number fact before it reaches price arithmetic. A
// trillion units of anything (seconds, images, characters) is no real task:
// it is a plugin bug or an attack, and refusing it is safer than billing
// it.
const maxUsageFact = 1e12

func checkFact(f manifest.UsageField, k string, val any) error {
	switch {
	case f.Type == "number":
		n, ok := manifest.Number(val)
		if !ok || n < 0 {
			return fmt.Errorf("usage fact %q must be a non-negative number", k)
		}
		if n > maxUsageFact {
			return fmt.Errorf("usage fact %q is %g, above the largest accepted value %g", k, n, float64(maxUsageFact))
		}
	case f.Type == "boolean":
		if _, ok := val.(bool); !ok {
			return fmt.Errorf("usage fact %q must be a boolean", k)
		}
	case len(f.Enum) > 0:
		s, _ := val.(string)
		if !slices.Contains(f.Enum, s) {
			return fmt.Errorf("usage fact %q must be one of the schema's enum values", k)
		}
	}
	return nil
}

// account is who pays for a task.
func (t *Task) account() billing.Account {
	return billing.Account{UserID: t.UserID, TokenID: t.TokenID, Group: t.Group, TeamID: t.TeamID, OrgID: t.OrgID, TeamPays: t.TeamPays}
}

// usageLog is a task's usage row in the shape every call's row has
// (admission.Other): the task's own facts go in as detail keys, and the
// submit's consume row lists the channels tried (attempts).
func (s *Service) usageLog(t *Task, typ string, quota int64, extra map[string]any, attempts []admission.Attempt) store.UsageLog {
	row := admission.Row(t.account(), t.Model, t.BillingKey, ir.Usage{}, time.Time{})
	row.Type, row.ChannelID, row.Quota = typ, t.ChannelID, quota
	o := admission.Other{Surface: taskSurface, UpstreamModel: t.UpstreamModel,
		GroupRatio: s.d.Billing.Ratio(t.Group), Attempts: attempts, PriceVersion: s.priceVersionOf(t)}
	if typ != store.LogRefund {
		o.Guardrails = t.guards
	}
	if typ == store.LogConsume || typ == store.LogRefund {
		o.UpstreamCostUSD = admission.USD(s.upstreamCost(t, quota, o.GroupRatio))
	}
	detail := make(map[string]any, len(extra)+3)
	for k, v := range extra {
		detail[k] = v
	}
	detail["task_id"], detail["platform"], detail["action"] = t.PublicID, t.PluginKey, t.Action
	admission.SetOther(&row, &o, detail)
	return row
}

// upstreamCost is what quota, charged for t at groupRatio, cost upstream
// at t's channel: a task row carries only its quota, so its list-price
// dollars are recovered from it (exact up to the half unit the charge was
// rounded by) and priced with the call rows' rule.
func (s *Service) upstreamCost(t *Task, quota int64, groupRatio float64) *big.Rat {
	usd := admission.QuotaUSD(quota, s.d.Billing.QuotaPerUSD(), groupRatio)
	price, err := s.d.Billing.Price(t.Model)
	if err != nil {
		return usd
	}
	var cost *store.ChannelCost
	if s.d.Router != nil {
		if tbl := s.d.Router.Table(); tbl != nil {
			if ch := tbl.Channel(t.ChannelID); ch != nil {
				cost = ch.Cost
			}
		}
	}
	return admission.UpstreamCost(price, cost, t.Model, t.UpstreamModel, ir.Usage{}, usd)
}

// priceVersionOf is the price version t was admitted at: the submitting
// process knows it; any other finds the version in effect at the submit.
func (s *Service) priceVersionOf(t *Task) int64 {
	if t.priceVersion != 0 {
		return t.priceVersion
	}
	if p, err := s.d.Billing.PriceAt(t.Model, submittedAt(t)); err == nil {
		return p.Version
	}
	return 0
}

// submittedAt is when t was submitted, the moment its price is taken at.
func submittedAt(t *Task) time.Time { return time.UnixMilli(t.SubmittedAt) }

// taskSurface names task rows' surface in the usage log, as chat rows name theirs.
const taskSurface = "task"

// ticketOf is the task's ticket: the one taken at submit while this
// process still has it, else restored from the task row (a poller, maybe
// on another node after a restart). Its budget share is the reservation,
// held when the task was created.
func (s *Service) ticketOf(t *Task) *admission.Ticket {
	if t.ticket != nil {
		return t.ticket
	}
	acct := t.account()
	return s.gate().Restore(admission.Record{Key: t.BillingKey, Reserved: t.QuotaReserved, UserID: acct.UserID,
		TokenID: acct.TokenID, Group: acct.Group, TeamID: acct.TeamID, OrgID: acct.OrgID, TeamPays: acct.TeamPays, Model: t.Model, HeldNS: time.UnixMilli(t.CreatedAt).UnixNano(),
		Budget: t.QuotaReserved})
}

// settle charges a finished task once. Ending the hold is the money's
// exactly-once guard (it is written only while the hold is open, whoever
// tries); the conditional billing-status update then records the outcome,
// and a failure between the two is finished by the recovery sweep, which
// finds the hold already ended and moves nothing. The submit's consume row
// carried the reservation, so only the difference gets a row.
func (s *Service) settle(ctx context.Context, t *Task, charge int64) error {
	var row *store.UsageLog
	switch diff := charge - t.QuotaReserved; {
	case diff > 0:
		r := s.usageLog(t, store.LogConsume, diff, map[string]any{"adjustment": true}, nil)
		row = &r
	case diff < 0:
		r := s.usageLog(t, store.LogRefund, -diff, map[string]any{"adjustment": true}, nil)
		row = &r
	}
	if _, err := s.ticketOf(t).SettleNow(ctx, charge, row); err != nil {
		return err
	}
	if _, err := s.store.MarkBilling(ctx, t.ID, BillingSettled, charge); err != nil {
		return err
	}
	t.BillingStatus, t.QuotaCharged = BillingSettled, charge
	return nil
}

// refund returns a failed task's whole reservation once, with a refund row
// matching the submit's consume row.
func (s *Service) refund(ctx context.Context, t *Task, reason string) error {
	row := s.usageLog(t, store.LogRefund, t.QuotaReserved, map[string]any{"reason": Truncate(reason, 200)}, nil)
	if _, err := s.ticketOf(t).RefundNow(ctx, &row); err != nil {
		return err
	}
	if _, err := s.store.MarkBilling(ctx, t.ID, BillingRefunded, 0); err != nil {
		return err
	}
	t.BillingStatus = BillingRefunded
	return nil
}
