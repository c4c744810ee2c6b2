package billing

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// ErrInsufficientUser, ErrInsufficientToken and ErrInsufficientTeam say
// whose quota did not fit.
var (
	ErrInsufficientUser  = errors.New("user quota is not enough")
	ErrInsufficientToken = errors.New("API key quota is not enough")
	ErrInsufficientTeam  = errors.New("team quota is not enough")
)

// Payer is the balance a call's money moves besides a limited key's: the
// user's own, or, with TeamID set, the shared balance of the user's team
// (a team with billing shared, CONTRACT §18). UserID names the member
// either way, for the books.
type Payer struct{ UserID, TeamID int64 }

// User is the payer of a user's own balance.
func User(id int64) Payer { return Payer{UserID: id} }

// team reports whether the team's shared balance pays.
func (p Payer) team() bool { return p.TeamID != 0 }

// Balances holds the live quota balances. The database follows them through
// ledger entries written in batches, so a reservation costs a few atomic
// operations instead of a database round trip.
type Balances interface {
	// Take removes amount from the payer's balance and, for a limited
	// key, the key's, both or neither. With force it takes even past zero:
	// real usage that has already happened is always charged.
	Take(ctx context.Context, p Payer, tokenID, amount int64, force bool) error
	// Give returns amount to the payer and, for a limited key, the key.
	Give(ctx context.Context, p Payer, tokenID, amount int64) error
	// AddUser changes only the user's balance (top-ups and corrections).
	AddUser(ctx context.Context, userID, delta int64) (int64, error)
	// AddToken changes only a limited key's balance.
	AddToken(ctx context.Context, tokenID, delta int64) (int64, error)
	// AddTeam changes only a team's shared balance.
	AddTeam(ctx context.Context, teamID, delta int64) (int64, error)
	User(ctx context.Context, userID int64) (int64, error)
	// Team returns a team's shared balance.
	Team(ctx context.Context, teamID int64) (int64, error)
	// Token returns the key's balance and whether it is limited.
	Token(ctx context.Context, tokenID int64) (int64, bool, error)
	// Forget drops cached balances so the next use reloads them from the
	// database, after the database was changed directly.
	Forget(userID, tokenID int64)
	// Committed runs write, which commits quota movements to the database
	// and returns them, and then moves the live balances in step. Only
	// balances already loaded are moved: one not loaded yet reads the
	// database on first use, which already holds the movement. It serves
	// the ends of holds whose live take was made by another process (the
	// sweep after a crash, a task ended on another node).
	Committed(ctx context.Context, write func() ([]Move, error)) error
}

// Move is a committed change of an account's live balance: Delta is added
// to the user (or, with TeamID set, to the team's shared balance) and, for
// a limited key, to the key.
type Move struct {
	UserID, TokenID, Delta int64
	TeamID                 int64
}

// payer is whose balance the move changes besides the key's.
func (mv Move) payer() Payer { return Payer{UserID: mv.UserID, TeamID: mv.TeamID} }

// memBalances is Balances for a single node: atomics in maps, loaded from
// the store on first use and never evicted while the process runs.
type memBalances struct {
	st store.Store
	// loading is held shared while a balance is read from the database and
	// exclusively by Committed, so a balance is either loaded before a
	// committed movement (and moved by it) or after (and reads it).
	loading sync.RWMutex
	users   sync.Map // int64 → *atomic.Int64
	tokens  sync.Map // int64 → *tokenBalance
	teams   sync.Map // int64 → *atomic.Int64
}

type tokenBalance struct {
	limited bool
	v       atomic.Int64
}

// NewMemoryBalances returns single-node balances backed by st.
func NewMemoryBalances(st store.Store) Balances { return &memBalances{st: st} }

func (m *memBalances) user(ctx context.Context, id int64) (*atomic.Int64, error) {
	if v, ok := m.users.Load(id); ok {
		return v.(*atomic.Int64), nil
	}
	m.loading.RLock()
	defer m.loading.RUnlock()
	u, err := m.st.Users().Get(ctx, id)
	if err != nil {
		return nil, storeUnavailable(err)
	}
	b := new(atomic.Int64)
	b.Store(u.Quota)
	v, _ := m.users.LoadOrStore(id, b)
	return v.(*atomic.Int64), nil
}

func (m *memBalances) team(ctx context.Context, id int64) (*atomic.Int64, error) {
	if v, ok := m.teams.Load(id); ok {
		return v.(*atomic.Int64), nil
	}
	m.loading.RLock()
	defer m.loading.RUnlock()
	t, err := m.st.Teams().GetTeam(ctx, id)
	if err != nil {
		return nil, storeUnavailable(err)
	}
	b := new(atomic.Int64)
	b.Store(t.Quota)
	v, _ := m.teams.LoadOrStore(id, b)
	return v.(*atomic.Int64), nil
}

// payer is p's balance: the team's shared one or the user's.
func (m *memBalances) payer(ctx context.Context, p Payer) (*atomic.Int64, error) {
	if p.team() {
		return m.team(ctx, p.TeamID)
	}
	return m.user(ctx, p.UserID)
}

// short is the error of a payer whose balance does not fit.
func short(p Payer) error {
	if p.team() {
		return ErrInsufficientTeam
	}
	return ErrInsufficientUser
}

func (m *memBalances) token(ctx context.Context, id int64) (*tokenBalance, error) {
	if id == 0 {
		return &tokenBalance{}, nil
	}
	if v, ok := m.tokens.Load(id); ok {
		return v.(*tokenBalance), nil
	}
	m.loading.RLock()
	defer m.loading.RUnlock()
	t, err := m.st.Tokens().Get(ctx, id)
	if err != nil {
		return nil, storeUnavailable(err)
	}
	// Only -1 means unlimited: a limited key that a forced settle took
	// below zero is still limited after a restart.
	b := &tokenBalance{limited: t.Quota != -1}
	b.v.Store(t.Quota)
	v, _ := m.tokens.LoadOrStore(id, b)
	return v.(*tokenBalance), nil
}

// takeFrom subtracts amount unless that would go below zero (and !force).
func takeFrom(b *atomic.Int64, amount int64, force bool) bool {
	for {
		cur := b.Load()
		if !force && cur < amount {
			return false
		}
		if b.CompareAndSwap(cur, cur-amount) {
			return true
		}
	}
}

func (m *memBalances) Take(ctx context.Context, p Payer, tokenID, amount int64, force bool) error {
	ub, err := m.payer(ctx, p)
	if err != nil {
		return err
	}
	tb, err := m.token(ctx, tokenID)
	if err != nil {
		return err
	}
	if tb.limited && !takeFrom(&tb.v, amount, force) {
		return ErrInsufficientToken
	}
	if !takeFrom(ub, amount, force) {
		if tb.limited {
			tb.v.Add(amount)
		}
		return short(p)
	}
	return nil
}

func (m *memBalances) Give(ctx context.Context, p Payer, tokenID, amount int64) error {
	ub, err := m.payer(ctx, p)
	if err != nil {
		return err
	}
	tb, err := m.token(ctx, tokenID)
	if err != nil {
		return err
	}
	ub.Add(amount)
	if tb.limited {
		tb.v.Add(amount)
	}
	return nil
}

func (m *memBalances) AddUser(ctx context.Context, userID, delta int64) (int64, error) {
	ub, err := m.user(ctx, userID)
	if err != nil {
		return 0, err
	}
	return ub.Add(delta), nil
}

func (m *memBalances) AddTeam(ctx context.Context, teamID, delta int64) (int64, error) {
	tb, err := m.team(ctx, teamID)
	if err != nil {
		return 0, err
	}
	return tb.Add(delta), nil
}

func (m *memBalances) Team(ctx context.Context, teamID int64) (int64, error) {
	return m.AddTeam(ctx, teamID, 0)
}

func (m *memBalances) AddToken(ctx context.Context, tokenID, delta int64) (int64, error) {
	tb, err := m.token(ctx, tokenID)
	if err != nil {
		return 0, err
	}
	if !tb.limited {
		return -1, nil
	}
	return tb.v.Add(delta), nil
}

func (m *memBalances) User(ctx context.Context, userID int64) (int64, error) {
	ub, err := m.user(ctx, userID)
	if err != nil {
		return 0, err
	}
	return ub.Load(), nil
}

func (m *memBalances) Token(ctx context.Context, tokenID int64) (int64, bool, error) {
	tb, err := m.token(ctx, tokenID)
	if err != nil {
		return 0, false, err
	}
	if !tb.limited {
		return -1, false, nil
	}
	return tb.v.Load(), true, nil
}

func (m *memBalances) Forget(userID, tokenID int64) {
	if userID != 0 {
		m.users.Delete(userID)
	}
	if tokenID != 0 {
		m.tokens.Delete(tokenID)
	}
}

func (m *memBalances) Committed(ctx context.Context, write func() ([]Move, error)) error {
	m.loading.Lock()
	defer m.loading.Unlock()
	moves, err := write()
	if err != nil {
		return err
	}
	for _, mv := range moves {
		main := &m.users
		id := mv.UserID
		if mv.TeamID != 0 {
			main, id = &m.teams, mv.TeamID
		}
		if v, ok := main.Load(id); ok {
			v.(*atomic.Int64).Add(mv.Delta)
		}
		if v, ok := m.tokens.Load(mv.TokenID); ok && mv.TokenID != 0 && v.(*tokenBalance).limited {
			v.(*tokenBalance).v.Add(mv.Delta)
		}
	}
	return nil
}
