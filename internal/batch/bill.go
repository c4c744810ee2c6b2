package batch

import (
	"context"
	"math/big"
	"sort"
	"time"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/admission"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// rowBill is one usage row of a batch: the lines of one model — the model
// that served a line, or for a line that was not charged the model it
// asked for — and what the charged ones come to.
type rowBill struct {
	model     string
	lines, ok int
	usage     ir.Usage
	// cost sums the exact costs of the charged lines; quota the charges of
	// lines recorded before costs were kept.
	cost  *big.Rat
	quota int64
}

// bill settles each of the batch's tickets once, with one usage row per
// batch and model whose charge is the exact parts of its charged lines
// summed and rounded once (CONTRACT §15). Every row is carried by a ticket
// (carriers); a ticket that carries none is given back. A ticket already
// ended (by a node that stopped before marking the batch billed) is not
// ended again: SettleNow reports it and moves nothing.
func (s *Service) bill(ctx context.Context, b *store.Batch) {
	if err := s.clearPending(ctx, b); err != nil {
		s.Logger.Error("batch tickets left pending not cleared; retried on the next round", "batch", b.PublicID, "err", err)
		return
	}
	rows, err := s.rowsOf(ctx, b)
	if err != nil {
		return
	}
	charges := make([]int64, len(rows))
	for i, r := range rows {
		if charges[i], err = s.rowCharge(b, r); err != nil {
			s.Logger.Error("batch row not priced; retried on the next round", "batch", b.PublicID, "model", r.model, "err", err)
			return
		}
	}
	carrier, err := s.carriers(ctx, b, rows)
	if err != nil {
		s.Logger.Error("batch row has no ticket; retried on the next round", "batch", b.PublicID, "err", err)
		return
	}
	hs := holdsOf(b)
	carried := make([]bool, len(hs))
	// Rows charged past their ticket first, then the others: a refund
	// never lands before the charge it pays for is taken.
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool {
		return charges[order[x]]-hs[carrier[order[x]]].Reserved > charges[order[y]]-hs[carrier[order[y]]].Reserved
	})
	var charged int64
	for _, i := range order {
		j := carrier[i]
		carried[j] = true
		row := s.batchRow(b, rows[i], charges[i])
		if _, err := s.ticketOf(b, hs[j]).SettleNow(ctx, charges[i], &row); err != nil {
			s.Logger.Error("batch ticket not settled; retried on the next round", "batch", b.PublicID, "model", rows[i].model, "err", err)
			return
		}
		charged += charges[i]
	}
	for j, h := range hs {
		if carried[j] {
			continue
		}
		if _, err := s.ticketOf(b, h).RefundNow(ctx, nil); err != nil {
			s.Logger.Error("batch ticket not given back; retried on the next round", "batch", b.PublicID, "err", err)
			return
		}
	}
	if _, err := s.Batches.MarkBilled(ctx, b.ID, charged); err != nil {
		s.Logger.Error("batch not marked billed; its tickets are ended and stay so", "batch", b.PublicID, "err", err)
	}
	b.Billed, b.Charged = true, charged
}

// rowsOf sums b's lines by model, sorted by model: the recorded outcomes,
// then the lines that never ran under the model they asked for.
func (s *Service) rowsOf(ctx context.Context, b *store.Batch) ([]*rowBill, error) {
	by := map[string]*rowBill{}
	row := func(m string) *rowBill {
		if by[m] == nil {
			by[m] = &rowBill{model: m, cost: new(big.Rat)}
		}
		return by[m]
	}
	done := map[int]bool{}
	err := s.eachOutcome(ctx, b.ID, func(l *store.BatchLine) {
		done[l.Line] = true
		r := row(l.Model)
		r.lines++
		if !l.OK {
			return
		}
		r.ok++
		r.usage.InputTokens += l.InputTokens
		r.usage.OutputTokens += l.OutputTokens
		if c, ok := new(big.Rat).SetString(l.Cost); ok && l.Cost != "" {
			r.cost.Add(r.cost, c)
		} else {
			r.quota += l.Quota
		}
	})
	if err != nil {
		return nil, err
	}
	err = s.eachLine(ctx, b.InputFileID, func(n int, raw []byte) error {
		if !done[n] {
			row(gjson.GetBytes(raw, "body.model").String()).lines++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]*rowBill, 0, len(by))
	for _, r := range by {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].model < out[j].model })
	return out, nil
}

// rowCharge is what a row comes to: its exact cost rounded once at the
// batch's group ratio, plus the charges of lines recorded without one.
func (s *Service) rowCharge(b *store.Batch, r *rowBill) (int64, error) {
	q, err := s.gate().CostQuota(r.cost, b.Group)
	return q + r.quota, err
}

// carriers picks the ticket that carries each row: the model's own, else
// one no row claims (one taken when the lines needed more), else a new
// ticket of nothing for the model (a fallback model that served lines).
// The choice depends only on the record, so a retry chooses the same.
func (s *Service) carriers(ctx context.Context, b *store.Batch, rows []*rowBill) ([]int, error) {
	hs := holdsOf(b)
	used := make([]bool, len(hs))
	carrier := make([]int, len(rows))
	for i, r := range rows {
		carrier[i] = -1
		for j, h := range hs {
			if !used[j] && h.Model == r.model {
				carrier[i], used[j] = j, true
				break
			}
		}
	}
	for i := range rows {
		for j := 0; carrier[i] < 0 && j < len(hs); j++ {
			if !used[j] {
				carrier[i], used[j] = j, true
			}
		}
	}
	for i, r := range rows {
		if carrier[i] >= 0 {
			continue
		}
		if _, err := s.addTicket(ctx, b, r.model, 0); err != nil {
			return nil, err
		}
		carrier[i] = len(holdsOf(b)) - 1
	}
	return carrier, nil
}

// batchRow is the usage row of one model of b.
func (s *Service) batchRow(b *store.Batch, r *rowBill, charge int64) store.UsageLog {
	acct := admission.Record{UserID: b.UserID, TokenID: b.TokenID, Group: b.Group}.Account()
	row := admission.Row(acct, r.model, b.PublicID, r.usage, time.Time{})
	row.Type, row.Quota = store.LogConsume, charge
	o := admission.Other{Endpoint: "batch", GroupRatio: s.Billing.Ratio(b.Group)}
	if p, err := s.Billing.PriceAt(r.model, admittedAt(b)); err == nil {
		o.PriceVersion = p.Version
	}
	// The lines are not kept with their channels, so a batch costs its
	// list (batch) price upstream: the row's dollars before the ratio.
	usd := new(big.Rat).Set(r.cost)
	usd.Add(usd, admission.QuotaUSD(r.quota, s.Billing.QuotaPerUSD(), o.GroupRatio))
	o.UpstreamCostUSD = admission.USD(usd)
	admission.SetOther(&row, &o, map[string]any{
		"batch": map[string]any{"id": b.PublicID, "lines": r.lines, "failed": r.lines - r.ok}})
	return row
}
