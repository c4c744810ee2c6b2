package batch

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/admission"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// A batch holds its money through durable tickets of the admission seam,
// kept in the batch record (Holds): one per model of the input, taken at
// create with the period budgets; one more whenever the lines need more
// than the batch holds (more:<n>); and one per model that served lines
// without a ticket of its own (a fallback), so that every model's row is
// carried by a ticket when the batch is billed.

// heldModel is one of a batch's tickets as its record keeps it. Model is
// the model whose lines it was taken for (empty for a ticket taken when
// the lines needed more); Lines how many lines of the input name it.
type heldModel struct {
	admission.Record
	Lines int `json:"lines"`
	// AdmittedNS is when the batch was admitted (Unix nanoseconds): the
	// lines are priced with the price version in effect then.
	AdmittedNS int64 `json:"admitted_ns,omitempty"`
	// Pending marks a ticket being taken after the batch started: the
	// record names it before the reservation is made, so a crash in
	// between leaves a name to clear (clearPending), never a hold nobody
	// names.
	Pending bool `json:"pending,omitempty"`
}

func holdsOf(b *store.Batch) []heldModel {
	var hs []heldModel
	_ = json.Unmarshal(b.Holds, &hs)
	return hs
}

func setHolds(b *store.Batch, hs []heldModel) { b.Holds, _ = json.Marshal(hs) }

// heldTotal is what a batch's tickets hold.
func heldTotal(hs []heldModel) int64 {
	var n int64
	for _, h := range hs {
		if !h.Pending {
			n += h.Reserved
		}
	}
	return n
}

// ticketOf restores one of b's tickets; a record from before tickets
// kept who pays is completed from the batch.
func (s *Service) ticketOf(b *store.Batch, h heldModel) *admission.Ticket {
	rec := h.Record
	rec.UserID, rec.TokenID, rec.Group = b.UserID, b.TokenID, b.Group
	if rec.HeldNS == 0 {
		rec.HeldNS = admittedAt(b).UnixNano()
	}
	return s.gate().Restore(rec)
}

// takeTickets takes one ticket per model of the plan, all or none: a
// model that does not fit gives back the ones taken and refuses the batch
// (402 insufficient_quota, or 429 budget_exceeded with its headers on h).
func (s *Service) takeTickets(ctx context.Context, acct billing.Account, id string, pl *plan, h http.Header) ([]heldModel, []*admission.Ticket, error) {
	var taken []*admission.Ticket
	var out []heldModel
	for _, m := range pl.sortedModels() {
		mp := pl.models[m]
		tk, err := s.gate().Hold(ctx, acct, m, "batch:"+id+":"+m, mp.estimate, h)
		if err != nil {
			for _, t := range taken {
				t.Refund(context.WithoutCancel(ctx), t.Hold, nil)
			}
			var e *ir.Error
			if errors.As(err, &e) && e.Status == 402 {
				err = &ir.Error{Status: 402, Kind: ir.KindQuota, Code: "insufficient_quota",
					Message: "the batch's estimate does not fit the remaining quota", Cause: err}
			}
			return nil, nil, err
		}
		taken = append(taken, tk)
		rec := tk.Record()
		out = append(out, heldModel{Record: rec, Lines: mp.lines, AdmittedNS: rec.HeldNS})
	}
	return out, taken, nil
}

// addTicket takes one more ticket of amount for b after it started (model
// names the row it is for; empty for more of the batch's hold) and keeps
// it in b's record. The record names it first, as pending; the
// reservation is then made, kept and flushed, and only then does the
// record call it held. It answers what the ticket holds.
func (s *Service) addTicket(ctx context.Context, b *store.Batch, model string, amount int64) (int64, error) {
	hs := holdsOf(b)
	n := len(hs)
	key := "batch:" + b.PublicID + ":more:" + strconv.Itoa(n)
	if model != "" {
		key = "batch:" + b.PublicID + ":" + model + ":" + strconv.Itoa(n)
	}
	rec := admission.Record{Key: key, Reserved: amount, UserID: b.UserID, TokenID: b.TokenID, Group: b.Group, Model: model,
		HeldNS: time.Now().UnixNano()}
	setHolds(b, append(hs, heldModel{Record: rec, AdmittedNS: admittedAt(b).UnixNano(), Pending: true}))
	if err := s.saveRecord(ctx, b); err != nil {
		setHolds(b, hs)
		return 0, err
	}
	tk, err := s.gate().Hold(ctx, rec.Account(), model, key, amount, nil)
	if err != nil {
		setHolds(b, hs)
		_ = s.saveRecord(context.WithoutCancel(ctx), b)
		return 0, err
	}
	tk.Keep(nil)
	if err := s.Billing.Writer().Flush(ctx); err != nil {
		return 0, err // still pending: cleared (refunded) on the next round
	}
	got := tk.Record()
	setHolds(b, append(hs, heldModel{Record: got, AdmittedNS: admittedAt(b).UnixNano()}))
	if err := s.saveRecord(context.WithoutCancel(ctx), b); err != nil {
		return 0, err
	}
	return got.Reserved, nil
}

// clearPending ends the tickets a run that stopped left pending: each is
// refunded if its reservation was made (nothing moves if it was not, or if
// the billing sweep released it already) and dropped from the record.
func (s *Service) clearPending(ctx context.Context, b *store.Batch) error {
	hs := holdsOf(b)
	kept := hs[:0:0]
	for _, h := range hs {
		if !h.Pending {
			kept = append(kept, h)
			continue
		}
		// A pending record names no budget share: a reservation that was
		// made held its whole amount against the budgets that applied.
		h.Budget = h.Reserved
		if _, err := s.ticketOf(b, h).RefundNow(ctx, nil); err != nil {
			return err
		}
	}
	if len(kept) == len(hs) {
		return nil
	}
	setHolds(b, kept)
	return s.saveRecord(ctx, b)
}

// saveRecord saves b's record whatever its status became meanwhile (a
// cancel): its tickets must be kept either way.
func (s *Service) saveRecord(ctx context.Context, b *store.Batch) error {
	ok, err := s.Batches.SaveBatch(ctx, b)
	if err != nil || ok {
		return err
	}
	cur, err := s.Batches.GetBatch(ctx, b.PublicID)
	if err != nil {
		return err
	}
	b.Status = cur.Status
	if ok, err = s.Batches.SaveBatch(ctx, b); err == nil && !ok {
		err = errors.New("batch record changed while its tickets were saved")
	}
	return err
}
