package billing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

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
	node        string
	balances    Balances
	writer      *Writer
	quotaPerUSD int64
	table       atomic.Pointer[priceTable]

	// moves is held shared by every live move together with the queuing of
	// its ledger entry, and exclusively by a rebuild (epoch.go) while it
	// flushes the writer, so no entry of a move made before the rebuild
	// reaches the database after it.
	moves sync.RWMutex
	rbMu  sync.Mutex
	rb    *rebuild
}

type priceTable struct {
	// prices holds every version of each priced model, in the order they
	// take effect: a snapshot knows a future price before it starts, so
	// every node switches at its time without being told.
	prices map[string][]*Price
	ratios map[string]float64
	// millionths are the ratios in whole millionths, for Charge's fast
	// path; a ratio that is not whole is missing.
	millionths map[string]uint64
}

// NewService builds the billing service.
func NewService(b Balances, w *Writer, quotaPerUSD int64) *Service {
	s := &Service{node: newNodeID(), balances: b, writer: w, quotaPerUSD: quotaPerUSD}
	if w != nil {
		w.setOnWritten(s.written)
	}
	if r, ok := b.(*redisBalances); ok {
		r.onStale = s.resync
	}
	s.table.Store(&priceTable{prices: map[string][]*Price{}, ratios: map[string]float64{}})
	return s
}

// Reload replaces the price and group snapshot; requests in flight keep the
// snapshot they started with.
func (s *Service) Reload(ctx context.Context, st store.Store) error {
	prices, err := st.Prices().List(ctx)
	if err != nil {
		return err
	}
	versions, err := st.Prices().Versions(ctx)
	if err != nil {
		return err
	}
	groups, err := st.Groups().List(ctx)
	if err != nil {
		return err
	}
	t := &priceTable{prices: priceLines(prices, versions), ratios: make(map[string]float64, len(groups))}
	t.millionths = make(map[string]uint64, len(groups))
	for _, g := range groups {
		t.ratios[g.Name] = g.Ratio
		if m, ok := ratioMillionths(g.Ratio); ok {
			t.millionths[g.Name] = m
		}
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
	return s.PriceAt(model, time.Now())
}

// PriceAt is the model's price version in effect at at: what a call
// admitted then is charged at, also when it is settled later (a task).
func (s *Service) PriceAt(model string, at time.Time) (*Price, error) {
	if p := inEffect(s.table.Load().prices[model], at); p != nil {
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
	if usd == nil || usd.Sign() == 0 {
		if q, ok := s.fixedCharge(p, u, group); ok {
			return q, nil
		}
	}
	cost := p.TokenCost(u)
	if usd != nil {
		cost.Add(cost, usd)
	}
	return Quota(cost, s.quotaPerUSD, s.Ratio(group))
}

// fixedCharge is Charge without math/big, for token-only charges whose
// rates and group ratio are whole in pico-dollars and millionths.
func (s *Service) fixedCharge(p *Price, u ir.Usage, group string) (int64, bool) {
	f := p.ratesFor(u.InputTokens).fixed
	if !f.ok {
		return 0, false
	}
	t := s.table.Load()
	m, ok := t.millionths[group]
	if _, has := t.ratios[group]; !has {
		m, ok = 1_000_000, true
	}
	if !ok {
		return 0, false
	}
	pico, ok := f.cost(u)
	if !ok {
		return 0, false
	}
	return fixedQuota(pico, s.quotaPerUSD, m)
}

// NewRequestKey returns a globally unique idempotency key: prefix and a
// UUIDv7, so keys made on different nodes (or by restarts of one) never
// collide, and sort by time. A key is used for exactly one movement; one
// found already recorded is an alarm (Writer.checkConflicts).
func (s *Service) NewRequestKey(prefix string) string {
	return prefix + "-" + uuid.Must(uuid.NewV7()).String()
}

// TopUp adds delta (may be negative) to a user's balance and records it.
func (s *Service) TopUp(ctx context.Context, userID, delta int64, note string) (int64, error) {
	s.moves.RLock()
	defer s.moves.RUnlock()
	bal, err := s.retryStale(ctx, func() (int64, error) { return s.balances.AddUser(ctx, userID, delta) })
	if err != nil {
		return 0, err
	}
	key := s.NewRequestKey("topup")
	s.writer.Item(store.BillingItem{
		Entry: &store.LedgerEntry{Key: key, Kind: store.LedgerTopUp, UserID: userID, Delta: delta, CreatedAt: time.Now().UTC()},
		Log: &store.UsageLog{Type: quotaLogType(delta), UserID: userID, Quota: delta, RequestID: key,
			Other: noteJSON(note), CreatedAt: time.Now().UTC()}})
	return bal, nil
}

// TopUpPaid adds bought credit to a user: a top-up like TopUp whose log row
// carries other as its detail and whose ledger entry has the caller's key.
// A key derived from what was paid for lets the ledger itself refuse a
// second entry for the same payment, beneath the caller's own once-only
// claim.
func (s *Service) TopUpPaid(ctx context.Context, userID, delta int64, key string, other json.RawMessage) (bool, error) {
	if delta <= 0 || key == "" {
		return false, fmt.Errorf("billing: a paid top-up needs a positive amount and a key")
	}
	// Written now and moved only if written: a credit whose key is stored
	// already is not given twice, so a delivery retried after a crash
	// between the order's mark and this write completes it exactly once.
	now := time.Now().UTC()
	written, err := s.commit(ctx, []store.BillingItem{{
		Entry: &store.LedgerEntry{Key: key, Kind: store.LedgerTopUp, UserID: userID, Delta: delta, CreatedAt: now},
		Log:   &store.UsageLog{Type: store.LogTopUp, UserID: userID, Quota: delta, RequestID: key, Other: other, CreatedAt: now}}},
		[]Move{{UserID: userID, Delta: delta}})
	if err != nil {
		return false, err
	}
	return written[0], nil
}

func quotaLogType(delta int64) string {
	if delta < 0 {
		return store.LogAdjust
	}
	return store.LogTopUp
}

// AdjustToken adds delta to a limited key's balance and records it.
func (s *Service) AdjustToken(ctx context.Context, userID, tokenID, delta int64) (int64, error) {
	s.moves.RLock()
	defer s.moves.RUnlock()
	bal, err := s.retryStale(ctx, func() (int64, error) { return s.balances.AddToken(ctx, tokenID, delta) })
	if err != nil {
		return 0, err
	}
	key := s.NewRequestKey("tokenadj")
	// The row makes the key's change visible in its log, and lets the
	// books match every ledger movement of the key to a usage row.
	s.writer.Item(store.BillingItem{
		Entry: &store.LedgerEntry{Key: key, Kind: store.LedgerTopUp, UserID: userID, TokenID: tokenID, TokenDelta: delta, CreatedAt: time.Now().UTC()},
		Log: &store.UsageLog{Type: quotaLogType(delta), UserID: userID, TokenID: tokenID, Quota: delta, RequestID: key,
			Other: noteJSON("API key quota changed by an administrator"), CreatedAt: time.Now().UTC()}})
	return bal, nil
}

func noteJSON(note string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"note": note})
	return b
}

// retryStale runs an administrative move, rebuilding once when Redis lost
// the balances. s.moves is held shared by the caller and is let go while
// the rebuild runs (which needs it exclusively); the move is then made in
// the new epoch.
func (s *Service) retryStale(ctx context.Context, move func() (int64, error)) (int64, error) {
	v, err := move()
	if !errors.Is(err, errStaleEpoch) {
		return v, err
	}
	s.moves.RUnlock()
	rerr := s.resync(ctx)
	s.moves.RLock()
	if rerr != nil {
		return 0, rerr
	}
	v, err = move()
	if errors.Is(err, errStaleEpoch) {
		return 0, errRebuilding
	}
	return v, err
}
