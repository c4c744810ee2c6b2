package store

import (
	"context"
	"math/big"
	"time"
)

// RollupKey is one bucket of the hourly rollups (CONTRACT §20): the usage
// rows of one type, hour, user, key, model, channel and team. The type is a
// dimension of its own so that a refund subtracts and an error counts
// without a report reading rows.
type RollupKey struct {
	Hour      time.Time
	UserID    int64
	TokenID   int64
	ChannelID int64
	TeamID    int64
	Model     string
	Type      string
}

// RollupSums are the sums a bucket keeps. UpstreamCostPico is the
// upstream cost in 10⁻¹² US dollars: a row's other.upstream_cost_usd has at
// most twelve decimals, so the sum is exact.
type RollupSums struct {
	Requests, InputTokens, OutputTokens, CacheReadTokens, Quota, Errors int64
	UpstreamCostPico                                                    int64
}

// Add adds o to s.
func (s *RollupSums) Add(o RollupSums) {
	s.Requests += o.Requests
	s.InputTokens += o.InputTokens
	s.OutputTokens += o.OutputTokens
	s.CacheReadTokens += o.CacheReadTokens
	s.Quota += o.Quota
	s.Errors += o.Errors
	s.UpstreamCostPico += o.UpstreamCostPico
}

// rollupOther is what a bucket reads of a row's other.
type rollupOther struct {
	CacheRead       int64       `json:"cache_read_tokens"`
	UpstreamCostUSD string      `json:"upstream_cost_usd"`
	Adjustment      bool        `json:"adjustment"`
	UpstreamModel   string      `json:"upstream_model"`
	Attempts        lastAttempt `json:"attempts"`
}

var picoPerUSD = big.NewRat(1_000_000_000_000, 1)

// RollupOf is the bucket a row falls in and what it adds there. A row
// that corrects a task's charge (other.adjustment) moves money but is no
// request of its own, as in the margin report.
func RollupOf(l UsageLog) (RollupKey, RollupSums) {
	return rollupOf(l, l.rollupOther()) // a row without these members adds none of them
}

func rollupOf(l UsageLog, o rollupOther) (RollupKey, RollupSums) {
	k := RollupKey{Hour: l.CreatedAt.UTC().Truncate(time.Hour), UserID: l.UserID, TokenID: l.TokenID,
		ChannelID: l.ChannelID, TeamID: teamOf(l), Model: l.Model, Type: l.Type}
	s := RollupSums{InputTokens: int64(l.PromptTokens), OutputTokens: int64(l.CompletionTokens),
		CacheReadTokens: o.CacheRead, Quota: l.Quota, UpstreamCostPico: pico(o.UpstreamCostUSD)}
	if !o.Adjustment {
		s.Requests = 1
	}
	if l.Type == LogError {
		s.Errors = 1
	}
	return k, s
}

// pico reads a decimal dollar string as 10⁻¹² dollars (rounded, should a
// writer ever have kept more digits).
func pico(usd string) int64 {
	n, _ := picoOK(usd)
	return n
}

// picoOK is pico and whether usd is a number at all (math/big's reading).
func picoOK(usd string) (int64, bool) {
	if usd == "" {
		return 0, false
	}
	if n, ok := picoFast(usd); ok {
		return n, true
	}
	r, ok := new(big.Rat).SetString(usd)
	if !ok {
		return 0, false
	}
	r.Mul(r, picoPerUSD)
	n := new(big.Int).Quo(r.Num(), r.Denom())
	if !n.IsInt64() {
		return 0, true
	}
	return n.Int64(), true
}

// RollupDims are the dimensions a rollup query groups by.
const (
	DimUser    = "user"
	DimToken   = "key"
	DimModel   = "model"
	DimChannel = "channel"
	DimTeam    = "team"
)

// RollupQuery sums the buckets of the whole hours in [Since, Until) by one
// dimension (empty: none), per day or hour when Granularity says so, and
// always per type.
type RollupQuery struct {
	Since, Until time.Time
	GroupBy      string
	// Granularity is "hour", "day" or empty (the whole window).
	Granularity string
	Types       []string
	// Days lets the query read the daily layer, the same buckets summed
	// per UTC day (Granularity must then not be "hour"): a 30-day window
	// reads 30 buckets of a combination there instead of 720. Spans says
	// which days and hours it reads.
	Days bool
	// UserID and TeamID keep the buckets of one user or team (0: all).
	UserID, TeamID int64
}

// Keeps reports whether the filters of q keep the bucket k.
func (q RollupQuery) Keeps(k RollupKey) bool {
	return (q.UserID == 0 || k.UserID == q.UserID) && (q.TeamID == 0 || k.TeamID == q.TeamID)
}

// RollupLine is one line of a rollup query: the group's value (an id as
// decimal digits or a model name), the period it starts (zero without a
// granularity), the type and the sums. UpstreamCostPico is a big integer:
// a window's sum may outgrow an int64 where a bucket's never does.
type RollupLine struct {
	Group  string
	Period time.Time
	Type   string
	RollupSums
	UpstreamCost *big.Int
}

// Empty reports whether every sum of l is zero: no row of the window is
// in it (a row adds a request or an error, or moves quota or cost).
func (l RollupLine) Empty() bool {
	return l.RollupSums == (RollupSums{}) && (l.UpstreamCost == nil || l.UpstreamCost.Sign() == 0)
}

// RollupRepo reads the hourly rollups and folds into them the rows written
// before they existed.
type RollupRepo interface {
	// Sum answers no line that is Empty: a cut day read as the day less
	// its hours outside q nets a group with no call inside to zeros.
	Sum(ctx context.Context, q RollupQuery) ([]RollupLine, error)
	// Ready reports whether every row in the database is in the rollups
	// (the backfill of older rows is done).
	Ready(ctx context.Context) (bool, error)
	// Backfill folds up to limit rows not yet in the rollups into them,
	// in one transaction with its watermark, and reports whether rows
	// remain.
	Backfill(ctx context.Context, limit int) (more bool, err error)
	// SumChannels sums the channel rollups (ChannelQuery), leaving out
	// the lines that are Empty.
	SumChannels(ctx context.Context, q ChannelQuery) ([]ChannelLine, error)
	// ChannelsReady reports whether every row in the database is in the
	// channel rollups (their fill after the upgrade that added them is
	// done, and no row of an earlier release waits).
	ChannelsReady(ctx context.Context) (bool, error)
	// Restart marks every row in the database as not yet in the rollups
	// and empties them, so Backfill rebuilds them from the rows (after an
	// import).
	Restart(ctx context.Context) error
}
