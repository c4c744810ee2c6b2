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

// Roles of a user within its team (CONTRACT.md §18).
const (
	TeamMember  = "member"
	TeamManager = "manager"
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
	// TeamID is the user's team (0: none); TeamRole is member or manager,
	// empty without a team.
	TeamID   int64  `json:"team_id"`
	TeamRole string `json:"team_role"`
}

// Session is a signed-in console session. Only a hash of the session's
// random id is stored, so a database dump holds no usable cookie.
type Session struct {
	IDHash    string
	UserID    int64
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Group is a pricing tier; Ratio multiplies every charge of its members.
type Group struct {
	Name  string  `json:"name"`
	Ratio float64 `json:"ratio"`
	// LogContent is the group's content logging (nil: off); a key's own
	// setting overrides it.
	LogContent *ContentLogging `json:"log_content,omitempty"`
}

// Token is an API key. Only KeyHash (hex SHA-256 of the full key) is stored;
// KeyMasked is what lists show.
type Token struct {
	ID        int64  `json:"id"`
	UserID    int64  `json:"user_id"`
	Name      string `json:"name"`
	KeyHash   string `json:"-"`
	KeyMasked string `json:"key"`
	// PrevKeyHash is the hash a rotation replaced; it authenticates until
	// PrevUntil. Both are empty when no grace is running or was given.
	PrevKeyHash string     `json:"-"`
	PrevUntil   *time.Time `json:"-"`
	Quota       int64      `json:"quota"` // remaining, or -1 for unlimited
	UsedQuota   int64      `json:"used_quota"`
	Models      []string   `json:"models"`
	ExpiresAt   *time.Time `json:"expires_at"`
	Status      string     `json:"status"`
	CreatedAt   time.Time  `json:"created_at"`
	// ResponseCache turns the response cache on for the key's calls, over
	// the model's own setting; nil leaves the model's.
	ResponseCache *ResponseCache `json:"response_cache,omitempty"`
	// LogContent is the key's content logging, over its group's; nil
	// leaves the group's.
	LogContent *ContentLogging `json:"log_content,omitempty"`
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
	// Cost is what the operator pays the provider for this channel's
	// calls; nil pays the models' list prices.
	Cost      *ChannelCost `json:"cost,omitempty"`
	Status    string       `json:"status"`
	CreatedAt time.Time    `json:"created_at"`
	UpdatedAt time.Time    `json:"updated_at"`
}

// ChannelCost is a channel's upstream cost: its own prices for the models
// it names, and for every other model the list price times Discount (nil:
// the list price). Costs are rates in US dollars, like ModelPrice.
type ChannelCost struct {
	Discount *float64             `json:"discount,omitempty"`
	Prices   map[string]CostPrice `json:"prices,omitempty"`
}

// CostPrice is what the provider charges the operator for one model, in
// the units of ModelPrice.
type CostPrice struct {
	InputPerMTok      float64     `json:"input_per_mtok,omitempty"`
	OutputPerMTok     float64     `json:"output_per_mtok,omitempty"`
	CacheReadPerMTok  float64     `json:"cache_read_per_mtok,omitempty"`
	CacheWritePerMTok float64     `json:"cache_write_per_mtok,omitempty"`
	ReasoningPerMTok  float64     `json:"reasoning_per_mtok,omitempty"`
	PerCall           float64     `json:"per_call,omitempty"`
	Tiers             []PriceTier `json:"tiers,omitempty"`
}

// ModelPrice is the cost price in ModelPrice's shape, for the one pricing
// function.
func (c CostPrice) ModelPrice(name string) ModelPrice {
	return ModelPrice{Name: name, InputPerMTok: c.InputPerMTok, OutputPerMTok: c.OutputPerMTok,
		CacheReadPerMTok: c.CacheReadPerMTok, CacheWritePerMTok: c.CacheWritePerMTok,
		ReasoningPerMTok: c.ReasoningPerMTok, PerCall: c.PerCall, Tiers: c.Tiers}
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
	// ReasoningPerMTok prices the reasoning tokens, which are part of the
	// output tokens; zero charges them at the output price.
	ReasoningPerMTok float64 `json:"reasoning_per_mtok,omitempty"`
	// Tiers are long-context prices, sorted by threshold: the tier with the
	// highest threshold below a request's input tokens prices the whole
	// request.
	Tiers []PriceTier `json:"tiers,omitempty"`
	// BatchInputPerMTok and BatchOutputPerMTok price the lines of a batch;
	// zero takes the live price (lines the gateway runs) or half of it
	// (provider batches).
	BatchInputPerMTok  float64 `json:"batch_input_per_mtok,omitempty"`
	BatchOutputPerMTok float64 `json:"batch_output_per_mtok,omitempty"`
	// Extra holds per-kind pricing (image size/quality factors, audio per
	// minute, task expressions) as JSON so new kinds need no migration.
	Extra json.RawMessage `json:"extra,omitempty"`
	// Fallbacks are the models tried in order when every channel of this
	// one failed before the first byte.
	Fallbacks []string `json:"fallbacks,omitempty"`
	// Affinity keeps a session on the channel key that served it, so the
	// provider's prompt cache is hit (CONTRACT §14); nil is the default
	// (on, 300 s).
	Affinity *Affinity `json:"affinity,omitempty"`
	// Routing chooses among the healthy channels of the highest priority;
	// nil is the default (weighted).
	Routing *RoutingChoice `json:"routing,omitempty"`
	// ResponseCache answers repeated requests from a cache (CONTRACT §22);
	// nil keeps it off for the model (a key may still turn it on).
	ResponseCache *ResponseCache `json:"response_cache,omitempty"`
	// StreamFailover continues a stream that broke after its first byte
	// on the next channel (CONTRACT §22).
	StreamFailover bool      `json:"stream_failover,omitempty"`
	UpdatedAt      time.Time `json:"updated_at"`
	// Version, EffectiveFrom, Source and Actor describe the price version
	// the fields above come from. Read: the version in effect. Written
	// (PriceRepo.Upsert): the version to add, effective now when
	// EffectiveFrom is zero.
	Version       int64     `json:"version,omitempty"`
	EffectiveFrom time.Time `json:"effective_from,omitzero"`
	Source        string    `json:"source,omitempty"`
	Actor         string    `json:"actor,omitempty"`
}

// Affinity is a model's cache affinity setting.
type Affinity struct {
	Enabled    bool `json:"enabled"`
	TTLSeconds int  `json:"ttl_seconds"`
}

// ResponseCache is a model entry's or key's response_cache object
// (CONTRACT §22): how long answers are kept, the share of the original
// charge a hit is billed, and the largest answer kept.
type ResponseCache struct {
	TTLSeconds int     `json:"ttl_seconds"`
	HitRatio   float64 `json:"hit_ratio"`
	MaxEntryKB int     `json:"max_entry_kb"`
}

// RoutingChoice is a model's routing strategy: weighted, least_busy,
// latency or cost.
type RoutingChoice struct {
	Strategy string `json:"strategy"`
}

// PriceTier is the price of a request whose input tokens (cache tokens
// included) exceed AboveInputTokens. Each price it leaves at zero is the
// base price's.
type PriceTier struct {
	AboveInputTokens  int64   `json:"above_input_tokens"`
	InputPerMTok      float64 `json:"input_per_mtok,omitempty"`
	OutputPerMTok     float64 `json:"output_per_mtok,omitempty"`
	CacheReadPerMTok  float64 `json:"cache_read_per_mtok,omitempty"`
	CacheWritePerMTok float64 `json:"cache_write_per_mtok,omitempty"`
	ReasoningPerMTok  float64 `json:"reasoning_per_mtok,omitempty"`
}

// Log types of the usage log.
const (
	LogConsume = "consume"
	LogRefund  = "refund"
	LogError   = "error"
	LogTopUp   = "topup"
	// LogAdjust is a quota change that takes units away (a negative
	// delta): not money in, so not a topup in the books.
	LogAdjust = "adjust"
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
	// TeamID and OrgID are the team and organisation of the call's user
	// when it was admitted (0: none), kept on the row so reports and log
	// filters need no join through a membership that may have changed.
	TeamID int64 `json:"team_id"`
	OrgID  int64 `json:"org_id"`
	// Facts are what the rollups read of Other, given by the code that
	// wrote Other (see OtherFacts); they count only while Other is the
	// very bytes they were taken from.
	Facts OtherFacts `json:"-"`
}

// Ledger kinds: every quota movement is one of these.
const (
	LedgerReserve = "reserve"
	LedgerSettle  = "settle"
	LedgerRefund  = "refund"
	LedgerTopUp   = "topup"
)

// LedgerEntry is one quota movement. Delta is signed quota units taken from
// (negative) or given to (positive) the user's balance, or the team's when
// TeamID is set (a member of a team with shared billing, or a team's
// top-up); TokenDelta is the same for the key (zero for unlimited keys and
// top-ups). Key is an idempotency key: applying the same key twice is a
// no-op.
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
	// TeamID is the team whose shared balance Delta moves instead of the
	// user's (0: the user's own balance); UserID still names the member
	// whose call it was.
	TeamID int64 `json:"team_id,omitempty"`
}

// Hold is a reservation that has not ended yet. Owner is the node that took
// it: a process that dies leaves its holds behind, and the sweep releases
// those whose owner's lease ran out. An empty Owner means the hold was
// handed to a durable record (a task) that ends it itself; the sweep never
// touches it.
type Hold struct {
	Key       string    `json:"key"`
	Owner     string    `json:"owner"`
	UserID    int64     `json:"user_id"`
	TokenID   int64     `json:"token_id"`
	Amount    int64     `json:"amount"`
	CreatedAt time.Time `json:"created_at"`
	// TeamID is the team whose shared balance the hold was taken from (0:
	// the user's), so a release gives it back there.
	TeamID int64 `json:"team_id,omitempty"`
}

// BillingItem is one unit of the billing writer: its ledger entry, its
// usage row and its hold change are committed together or not at all, and
// a batch never splits an item. Entry and Log are each optional.
//
// An item is written at most once: when its Entry's key is already
// recorded, its Log and hold change are skipped too, so a batch replayed
// after an ambiguous commit duplicates nothing.
type BillingItem struct {
	Entry *LedgerEntry
	Log   *UsageLog
	// Open records Open as an open hold (with its reserve Entry).
	Open *Hold
	// Close ends the open hold with this key. The item is written only if
	// that hold was open, so a hold ends exactly once whoever ends it (the
	// call, a task poller on any node, or the sweep).
	Close string
	// Keep hands the open hold with this key to a durable record (Owner
	// becomes empty). The item is written only if that hold was open.
	Keep string
}
