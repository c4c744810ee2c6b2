package billing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Account is who pays for a call.
type Account struct {
	UserID  int64
	TokenID int64
	Group   string
}

// Service prices calls and moves quota.
type Service struct {
	balances    Balances
	writer      *Writer
	quotaPerUSD int64
	table       atomic.Pointer[priceTable]
	seq         atomic.Int64
}

type priceTable struct {
	prices map[string]*Price
	ratios map[string]float64
}

// NewService builds the billing service.
func NewService(b Balances, w *Writer, quotaPerUSD int64) *Service {
	s := &Service{balances: b, writer: w, quotaPerUSD: quotaPerUSD}
	s.table.Store(&priceTable{prices: map[string]*Price{}, ratios: map[string]float64{}})
	return s
}

// Reload replaces the price and group snapshot; requests in flight keep the
// snapshot they started with.
func (s *Service) Reload(ctx context.Context, st store.Store) error {
	prices, err := st.Prices().List(ctx)
	if err != nil {
		return err
	}
	groups, err := st.Groups().List(ctx)
	if err != nil {
		return err
	}
	t := &priceTable{prices: make(map[string]*Price, len(prices)), ratios: make(map[string]float64, len(groups))}
	for _, p := range prices {
		t.prices[p.Name] = NewPrice(p)
	}
	for _, g := range groups {
		t.ratios[g.Name] = g.Ratio
	}
	s.table.Store(t)
	return nil
}

// QuotaPerUSD is the configured conversion rate.
func (s *Service) QuotaPerUSD() int64 { return s.quotaPerUSD }

// Balances exposes the live balances (for the admin API).
func (s *Service) Balances() Balances { return s.balances }

// Writer exposes the batched writer (for logs that move no quota).
func (s *Service) Writer() *Writer { return s.writer }

// Price returns the model's price, or a model_price_error when the model has
// none: serving an unpriced model would give it away by accident. It is a
// 400, not a 5xx, so client libraries report it at once instead of retrying
// a call that cannot succeed until an administrator acts.
func (s *Service) Price(model string) (*Price, error) {
	if p, ok := s.table.Load().prices[model]; ok {
		return p, nil
	}
	return nil, &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "model_price_error",
		Message: fmt.Sprintf("model %s has no price; an administrator must set one or mark it free", model)}
}

// Ratio is the group's price ratio (1 when the group has none).
func (s *Service) Ratio(group string) float64 {
	if r, ok := s.table.Load().ratios[group]; ok {
		return r
	}
	return 1
}

// Charge is the one pricing function of every surface and of tasks:
// round_half_up((token cost of u + usd) × quota_per_usd × group ratio),
// one rounding per request over the exact sum of its parts (CONTRACT §2).
// usd may be nil; a free model costs nothing whatever the parts.
func (s *Service) Charge(p *Price, u ir.Usage, usd *big.Rat, group string) (int64, error) {
	if p.Free {
		return 0, nil
	}
	cost := p.TokenCost(u)
	if usd != nil {
		cost.Add(cost, usd)
	}
	return Quota(cost, s.quotaPerUSD, s.Ratio(group))
}

// Hold is a reservation that must end in exactly one Settle or Refund.
type Hold struct {
	s        *Service
	acct     Account
	key      string
	Reserved int64
	ended    atomic.Bool
}

// NewRequestKey returns a process-unique idempotency prefix for a request.
func (s *Service) NewRequestKey(prefix string) string {
	return prefix + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.FormatInt(s.seq.Add(1), 36)
}

// Reserve takes amount from the account ahead of the call. It fails with a
// 402 insufficient_quota error naming whose quota did not fit.
func (s *Service) Reserve(ctx context.Context, acct Account, key string, amount int64) (*Hold, error) {
	if amount < 0 {
		amount = 0
	}
	if err := s.balances.Take(ctx, acct.UserID, acct.TokenID, amount, false); err != nil {
		return nil, quotaError(err)
	}
	h := &Hold{s: s, acct: acct, key: key, Reserved: amount}
	s.record(h, store.LedgerReserve, -amount, 0)
	return h, nil
}

func quotaError(err error) error {
	if errors.Is(err, ErrInsufficientUser) || errors.Is(err, ErrInsufficientToken) {
		return &ir.Error{Status: 402, Kind: ir.KindQuota, Code: "insufficient_quota", Message: err.Error() + " for this request", Cause: err}
	}
	return err
}

func (s *Service) record(h *Hold, kind string, delta, used int64) {
	tokenDelta := delta
	e := store.LedgerEntry{Key: h.key + ":" + kind, Kind: kind, UserID: h.acct.UserID, TokenID: h.acct.TokenID,
		Delta: delta, TokenDelta: tokenDelta, Used: used, CreatedAt: time.Now().UTC()}
	s.writer.Ledger(e)
}

// Settle charges the real amount: the difference to the reservation is taken
// or returned, and the consume log row is written. It returns false when the
// hold had already ended.
func (h *Hold) Settle(ctx context.Context, charge int64, log store.UsageLog) bool {
	if !h.ended.CompareAndSwap(false, true) {
		return false
	}
	diff := charge - h.Reserved
	var err error
	switch {
	case diff > 0:
		err = h.s.balances.Take(ctx, h.acct.UserID, h.acct.TokenID, diff, true)
	case diff < 0:
		err = h.s.balances.Give(ctx, h.acct.UserID, h.acct.TokenID, -diff)
	}
	if err != nil {
		// The balance was loaded when reserving, so only an account deleted
		// meanwhile lands here; the ledger row still records the charge.
		h.s.writer.log.Warn("settle could not adjust the live balance", "key", h.key, "err", err)
	}
	h.s.record(h, store.LedgerSettle, -diff, charge)
	log.Type = store.LogConsume
	log.Quota = charge
	log.RequestID = h.key
	h.s.writer.Log(log)
	return true
}

// Refund returns the whole reservation. log, when not nil, is written as an
// error row so failed calls are visible in the usage log.
func (h *Hold) Refund(ctx context.Context, log *store.UsageLog) bool {
	if !h.ended.CompareAndSwap(false, true) {
		return false
	}
	if h.Reserved > 0 {
		_ = h.s.balances.Give(ctx, h.acct.UserID, h.acct.TokenID, h.Reserved)
	}
	h.s.record(h, store.LedgerRefund, h.Reserved, 0)
	if log != nil {
		log.Type = store.LogError
		log.RequestID = h.key
		h.s.writer.Log(*log)
	}
	return true
}

// TopUp adds delta (may be negative) to a user's balance and records it.
func (s *Service) TopUp(ctx context.Context, userID, delta int64, note string) (int64, error) {
	bal, err := s.balances.AddUser(ctx, userID, delta)
	if err != nil {
		return 0, err
	}
	key := s.NewRequestKey("topup")
	s.writer.Ledger(store.LedgerEntry{Key: key, Kind: store.LedgerTopUp, UserID: userID, Delta: delta, CreatedAt: time.Now().UTC()})
	s.writer.Log(store.UsageLog{Type: store.LogTopUp, UserID: userID, Quota: delta, RequestID: key,
		Other: noteJSON(note), CreatedAt: time.Now().UTC()})
	return bal, nil
}

// AdjustToken adds delta to a limited key's balance and records it.
func (s *Service) AdjustToken(ctx context.Context, userID, tokenID, delta int64) (int64, error) {
	bal, err := s.balances.AddToken(ctx, tokenID, delta)
	if err != nil {
		return 0, err
	}
	key := s.NewRequestKey("tokenadj")
	s.writer.Ledger(store.LedgerEntry{Key: key, Kind: store.LedgerTopUp, UserID: userID, TokenID: tokenID, TokenDelta: delta, CreatedAt: time.Now().UTC()})
	return bal, nil
}

func noteJSON(note string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"note": note})
	return b
}
