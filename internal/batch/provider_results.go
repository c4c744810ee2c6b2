package batch

import (
	"github.com/tidwall/gjson"

	"context"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// pollUpstream asks the provider how the batch is doing; a cancel asked of
// the gateway is passed on once. When the provider's batch ended, its
// result sets are read into line outcomes (true).
func (s *Service) pollUpstream(ctx context.Context, b *store.Batch, st *providerState, p *provider) (bool, error) {
	if b.Status == store.BatchCancelling && !st.CancelSent {
		req, err := p.api.CancelBatch(ctx, p.t, st.BatchID)
		if _, err := s.call(ctx, p, req, err); err != nil {
			return false, err
		}
		st.CancelSent = true
	}
	req, err := p.api.GetBatch(ctx, p.t, st.BatchID)
	raw, err := s.call(ctx, p, req, err)
	if err != nil {
		return false, err
	}
	up, err := p.api.DecodeBatch(raw)
	if err != nil {
		return false, err
	}
	st.Status = up.Status
	if !up.Ended {
		b.Completed, b.Failed = up.Completed, up.Failed
		return false, nil
	}
	if len(up.Errors) > 0 {
		b.Errors = up.Errors // the provider's validation, line numbers and all
	}
	if err := s.saveState(ctx, b, *st); err != nil {
		return false, err
	}
	lines, price, err := s.providerResultsBasis(ctx, b)
	if err != nil {
		return false, err
	}
	for _, ref := range up.Results {
		if err := s.collect(ctx, b, p, st.BatchID, ref, lines, price); err != nil {
			return false, err
		}
	}
	return true, nil
}

// providerResultsBasis is what reading a provider batch's results needs:
// the input's line numbers by custom id, and the batch price the lines are
// charged at (of the version in effect when the batch was admitted).
func (s *Service) providerResultsBasis(ctx context.Context, b *store.Batch) (map[string]int, *billing.Price, error) {
	lines, err := s.customIDs(ctx, b)
	if err != nil {
		return nil, nil, err
	}
	price, err := s.Billing.PriceAt(modelOf(b), admittedAt(b))
	if err != nil {
		return nil, nil, err
	}
	return lines, billing.BatchPrice(price, true), nil
}

// customIDs maps the input's custom ids to their line numbers.
func (s *Service) customIDs(ctx context.Context, b *store.Batch) (map[string]int, error) {
	out := map[string]int{}
	err := s.eachLine(ctx, b.InputFileID, func(n int, raw []byte) error {
		out[gjson.GetBytes(raw, "custom_id").String()] = n
		return nil
	})
	return out, err
}

// collect reads one result set of the ended provider batch id into line
// outcomes, each answered line priced at the batch price from the usage
// the adapter's codec read (cache and reasoning tokens included).
func (s *Service) collect(ctx context.Context, b *store.Batch, p *provider, id, ref string, lines map[string]int, price *billing.Price) error {
	req, err := p.api.BatchResults(ctx, p.t, id, ref)
	resp, err := s.do(ctx, p, req, err)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	model := modelOf(b)
	return readLines(resp.Body, func(raw []byte) error {
		r, ok := p.api.DecodeBatchResult(b.Endpoint, raw)
		if !ok {
			return nil
		}
		n, ok := lines[r.CustomID]
		if !ok {
			return nil
		}
		out := &store.BatchLine{BatchID: b.ID, Line: n, CustomID: r.CustomID, Model: model, Status: r.Status, Body: string(r.Body)}
		if r.OK {
			q, err := s.gate().Quota(price, r.Usage, price.CallCost(1), b.Group)
			if err != nil {
				return err
			}
			out.OK, out.InputTokens, out.OutputTokens, out.Quota = true, r.Usage.InputTokens, r.Usage.OutputTokens, q
			out.Cost = price.Cost(r.Usage, price.CallCost(1)).RatString()
		}
		_, err := s.Batches.PutLine(ctx, out)
		return err
	})
}
