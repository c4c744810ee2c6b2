package store

import (
	"encoding/json"
	"time"
)

// Status values shared by users, tokens and channels.
const (
	StatusEnabled  = "enabled"
	StatusDisabled = "disabled"
)

// Roles, from most to least powerful.
const (
	RoleRoot  = "root"
	RoleAdmin = "admin"
	RoleUser  = "user"
)

// User is an account that owns API keys and a quota balance.
type User struct {
	ID           int64     `json:"id"`
	Username     string    `json:"username"`
	PasswordHash string    `json:"-"`
	Role         string    `json:"role"`
	Group        string    `json:"group"`
	Quota        int64     `json:"quota"`
	UsedQuota    int64     `json:"used_quota"`
	Status       string    `json:"status"`
	CreatedAt    time.Time `json:"created_at"`
}

// Group is a pricing tier; Ratio multiplies every charge of its members.
type Group struct {
	Name  string  `json:"name"`
	Ratio float64 `json:"ratio"`
}

// Token is an API key. Only KeyHash (hex SHA-256 of the full key) is stored;
// KeyMasked is what lists show.
type Token struct {
	ID        int64      `json:"id"`
	UserID    int64      `json:"user_id"`
	Name      string     `json:"name"`
	KeyHash   string     `json:"-"`
	KeyMasked string     `json:"key"`
	Quota     int64      `json:"quota"` // remaining, or -1 for unlimited
	UsedQuota int64      `json:"used_quota"`
	Models    []string   `json:"models"`
	ExpiresAt *time.Time `json:"expires_at"`
	Status    string     `json:"status"`
	CreatedAt time.Time  `json:"created_at"`
}

// Channel is one upstream provider account. Key is the provider secret and
// must never leave the process except towards that provider.
type Channel struct {
	ID           int64             `json:"id"`
	Name         string            `json:"name"`
	Type         int               `json:"type"`
	BaseURL      string            `json:"base_url"`
	Key          string            `json:"-"`
	Models       []string          `json:"models"`
	Groups       []string          `json:"groups"`
	Priority     int64             `json:"priority"`
	Weight       int               `json:"weight"`
	ModelMapping map[string]string `json:"model_mapping"`
	Settings     map[string]any    `json:"settings"`
	Status       string            `json:"status"`
	CreatedAt    time.Time         `json:"created_at"`
	UpdatedAt    time.Time         `json:"updated_at"`
}

// Ability is one row of the model × group → channel index, derived from
// channels whenever one is saved.
type Ability struct {
	Group     string
	Model     string
	ChannelID int64
	Priority  int64
	Weight    int
	Enabled   bool
}

// ModelPrice is what a model costs, in US dollars. Prices are rates, not
// money: charges computed from them are integer quota units.
type ModelPrice struct {
	Name              string  `json:"name"`
	InputPerMTok      float64 `json:"input_per_mtok,omitempty"`
	OutputPerMTok     float64 `json:"output_per_mtok,omitempty"`
	CacheReadPerMTok  float64 `json:"cache_read_per_mtok,omitempty"`
	CacheWritePerMTok float64 `json:"cache_write_per_mtok,omitempty"`
	PerCall           float64 `json:"per_call,omitempty"`
	Free              bool    `json:"free,omitempty"`
	// Extra holds per-kind pricing (image size/quality factors, audio per
	// minute, task expressions) as JSON so new kinds need no migration.
	Extra json.RawMessage `json:"extra,omitempty"`
	// Fallbacks are the models tried in order when every channel of this
	// one failed before the first byte.
	Fallbacks []string  `json:"fallbacks,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Log types of the usage log.
const (
	LogConsume = "consume"
	LogRefund  = "refund"
	LogError   = "error"
	LogTopUp   = "topup"
)

// UsageLog is one row of the usage log shown to users.
type UsageLog struct {
	ID               int64           `json:"id"`
	Type             string          `json:"type"`
	UserID           int64           `json:"user_id"`
	TokenID          int64           `json:"token_id"`
	ChannelID        int64           `json:"channel_id"`
	Model            string          `json:"model"`
	PromptTokens     int             `json:"prompt_tokens"`
	CompletionTokens int             `json:"completion_tokens"`
	Quota            int64           `json:"quota"`
	LatencyMS        int64           `json:"latency_ms"`
	RequestID        string          `json:"request_id,omitempty"`
	Other            json.RawMessage `json:"other,omitempty"`
	CreatedAt        time.Time       `json:"created_at"`
}

// Ledger kinds: every quota movement is one of these.
const (
	LedgerReserve = "reserve"
	LedgerSettle  = "settle"
	LedgerRefund  = "refund"
	LedgerTopUp   = "topup"
)

// LedgerEntry is one quota movement. Delta is signed quota units taken from
// (negative) or given to (positive) the user's balance; TokenDelta is the
// same for the key (zero for unlimited keys and top-ups). Key is an
// idempotency key: applying the same key twice is a no-op.
type LedgerEntry struct {
	ID         int64  `json:"id"`
	Key        string `json:"key"`
	Kind       string `json:"kind"`
	UserID     int64  `json:"user_id"`
	TokenID    int64  `json:"token_id"`
	Delta      int64  `json:"delta"`
	TokenDelta int64  `json:"token_delta"`
	// Used is the change to used_quota (settled charges minus refunds of
	// settled charges); reservations do not count as used.
	Used      int64     `json:"used"`
	CreatedAt time.Time `json:"created_at"`
}
