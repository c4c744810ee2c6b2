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
	// TeamID and OrgID are the caller's team and organisation (0: none),
	// for the levels of its budgets and the columns of its usage rows.
	TeamID int64
	OrgID  int64
	// TeamPays is set for a member of a team with billing shared: the
	// team's balance pays its calls instead of its own (CONTRACT §18).
	TeamPays bool
}

// Payer is whose balance pays the account's calls.
func (a Account) Payer() Payer {
	if a.TeamPays && a.TeamID != 0 {
		return Payer{UserID: a.UserID, TeamID: a.TeamID}
	}
	return User(a.UserID)
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
	return requestKey(prefix, uuid.Must(uuid.NewV7()))
}

// Credit is money that comes from outside the model calls: a starting
// balance, an administrator's adjustment (negative too), a redeemed code, a
// card payment. Every such movement goes through Service.Credit, so each is
// a ledger entry and a usage row (topup, or adjust when negative) and none
// moves a balance behind the books.
type Credit struct {
	UserID int64
	// TokenID, when set, moves a limited key's own balance instead of the
	// user's.
	TokenID int64
	// TeamID, when set (and UserID not), moves a team's shared balance;
	// it is never taken below zero (store.ErrConflict).
	TeamID int64
	Delta  int64
	// Note says why, on the usage row ("redemption code 12").
	Note string
	// Detail is the usage row's detail in place of the note (a payment's
	// order and amount).
	Detail json.RawMessage
	// Key makes the credit happen once: the entry is written first under
	// it and the balance moves only if it was written, so a payment
	// delivered twice is credited once. Only positive user credits take
	// one. Empty: a fresh key, the balance moves at once and the entry is
	// written behind.
	Key string
}

// Credited is what a credit did.
type Credited struct {
	// Balance is the balance it moved, after the move (credits without a
	// Key).
	Balance int64
	// Applied is false when a credit's Key was recorded already.
	Applied bool
}

// Credit moves c into the books and the live balance.
func (s *Service) Credit(ctx context.Context, c Credit) (Credited, error) {
	switch {
	case c.Key != "":
		if c.Delta <= 0 || c.TokenID != 0 {
			return Credited{}, fmt.Errorf("billing: a keyed credit needs a positive amount for a user")
		}
		ok, err := s.creditOnce(ctx, c)
		return Credited{Applied: ok}, err
	case c.TokenID != 0:
		bal, err := s.creditNow(ctx, c, "tokenadj", func() (int64, error) { return s.balances.AddToken(ctx, c.TokenID, c.Delta) })
		return Credited{Balance: bal, Applied: err == nil}, err
	case c.TeamID != 0:
		bal, err := s.creditNow(ctx, c, "teamadj", func() (int64, error) { return s.addTeam(ctx, c.TeamID, c.Delta) })
		return Credited{Balance: bal, Applied: err == nil}, err
	default:
		bal, err := s.creditNow(ctx, c, "topup", func() (int64, error) { return s.balances.AddUser(ctx, c.UserID, c.Delta) })
		return Credited{Balance: bal, Applied: err == nil}, err
	}
}

// creditNow moves the live balance and queues the entry under a fresh key.
func (s *Service) creditNow(ctx context.Context, c Credit, prefix string, move func() (int64, error)) (int64, error) {
	s.moves.RLock()
	defer s.moves.RUnlock()
	bal, err := s.retryStale(ctx, move)
	if err != nil {
		return 0, err
	}
	key := s.NewRequestKey(prefix)
	now := time.Now().UTC()
	entry := &store.LedgerEntry{Key: key, Kind: store.LedgerTopUp, UserID: c.UserID, Delta: c.Delta, CreatedAt: now}
	if c.TokenID != 0 {
		// The row makes the key's change visible in its log, and lets the
		// books match every ledger movement of the key to a usage row.
		entry.Delta, entry.TokenID, entry.TokenDelta = 0, c.TokenID, c.Delta
	}
	log := &store.UsageLog{Type: quotaLogType(c.Delta), UserID: c.UserID, TokenID: c.TokenID, Quota: c.Delta, RequestID: key,
		Other: c.detail(), CreatedAt: now}
	if c.TeamID != 0 {
		entry.TeamID, log.TeamID, log.Other = c.TeamID, c.TeamID, markTeamPaid(log.Other)
	}
	s.writer.Item(store.BillingItem{Entry: entry, Log: log})
	return bal, nil
}

// addTeam moves a team's shared balance by delta, refusing atomically a
// withdrawal the balance does not hold.
func (s *Service) addTeam(ctx context.Context, teamID, delta int64) (int64, error) {
	if delta >= 0 {
		return s.balances.AddTeam(ctx, teamID, delta)
	}
	err := s.balances.Take(ctx, Payer{TeamID: teamID}, 0, -delta, false)
	if errors.Is(err, ErrInsufficientTeam) {
		return 0, fmt.Errorf("the team's balance cannot go below zero: %w", store.ErrConflict)
	}
	if err != nil {
		return 0, err
	}
	return s.balances.Team(ctx, teamID)
}

// creditOnce writes the entry now and moves the balance only if it was
// written: a credit whose key is stored already is not given twice, so a
// delivery retried after a crash between the caller's own once-only claim
// and this write completes it exactly once.
func (s *Service) creditOnce(ctx context.Context, c Credit) (bool, error) {
	now := time.Now().UTC()
	written, err := s.commit(ctx, []store.BillingItem{{
		Entry: &store.LedgerEntry{Key: c.Key, Kind: store.LedgerTopUp, UserID: c.UserID, Delta: c.Delta, CreatedAt: now},
		Log:   &store.UsageLog{Type: store.LogTopUp, UserID: c.UserID, Quota: c.Delta, RequestID: c.Key, Other: c.detail(), CreatedAt: now}}},
		[]Move{{UserID: c.UserID, Delta: c.Delta}})
	if err != nil {
		return false, err
	}
	return written[0], nil
}

func (c Credit) detail() json.RawMessage {
	if c.Detail != nil {
		return c.Detail
	}
	return noteJSON(c.Note)
}

func quotaLogType(delta int64) string {
	if delta < 0 {
		return store.LogAdjust
	}
	return store.LogTopUp
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
