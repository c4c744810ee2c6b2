package store

import (
	"encoding/json"
	"math/big"
	"time"
)

// ChannelKey is one bucket of the channel rollups: the consume and refund
// rows of one hour that one channel's key (the one that served, the row's
// last attempt) answered for one model under the upstream's name of it.
// The cache report by key and the provider comparison read them; the
// usage rollups have neither the key index nor the upstream model. A
// refund is no type of its own here but columns of its own (two model
// names and a type would outgrow MySQL's longest key).
type ChannelKey struct {
	Hour          time.Time
	ChannelID     int64
	KeyIndex      int64
	Model         string
	UpstreamModel string
}

// ChannelSums are what a channel bucket keeps: the consume and refund rows,
// the requests, tokens and cache reads of the consume rows, and the
// upstream cost net of the refunds'. CostRows counts the rows that had an
// upstream cost at all: the provider comparison tells a side with no cost
// from one whose cost is zero.
type ChannelSums struct {
	Consumes, Refunds, Requests, InputTokens, OutputTokens, CacheReadTokens, UpstreamCostPico, CostRows int64
}

// Add adds o to s.
func (s *ChannelSums) Add(o ChannelSums) {
	s.Consumes += o.Consumes
	s.Refunds += o.Refunds
	s.Requests += o.Requests
	s.InputTokens += o.InputTokens
	s.OutputTokens += o.OutputTokens
	s.CacheReadTokens += o.CacheReadTokens
	s.UpstreamCostPico += o.UpstreamCostPico
	s.CostRows += o.CostRows
}

// lastAttempt is the key index of the last of a row's other.attempts,
// read as json.Unmarshal reads it into a slice of {key_index}: a value
// that is no array leaves it as it was, an empty array is index 0.
type lastAttempt struct{ KeyIndex int64 }

func (a *lastAttempt) UnmarshalJSON(b []byte) error {
	var all []struct {
		KeyIndex int64 `json:"key_index"`
	}
	_ = json.Unmarshal(b, &all) // an element of the wrong type is read as far as it goes
	if all == nil {
		return nil
	}
	a.KeyIndex = 0
	if n := len(all); n > 0 {
		a.KeyIndex = all[n-1].KeyIndex
	}
	return nil
}

// Rollups is what a row adds to the usage rollups and, when it has one
// (ok), to the channel rollups: its other is read once for both, as the
// billing writer folds every row into each.
func Rollups(l UsageLog) (k RollupKey, s RollupSums, ck ChannelKey, cs ChannelSums, ok bool) {
	o := l.rollupOther() // a row without these members adds none of them
	k, s = rollupOf(l, o)
	if l.ChannelID == 0 || l.Type != LogConsume && l.Type != LogRefund {
		return k, s, ck, cs, false
	}
	model := o.UpstreamModel
	if model == "" {
		model = l.Model
	}
	ck = ChannelKey{Hour: k.Hour, ChannelID: l.ChannelID, KeyIndex: o.Attempts.KeyIndex, Model: l.Model, UpstreamModel: model}
	cost, costOK := picoOK(o.UpstreamCostUSD)
	if costOK {
		cs.CostRows = 1
	}
	if l.Type == LogRefund {
		cs.Refunds, cs.UpstreamCostPico = 1, -cost
		return k, s, ck, cs, true
	}
	cs.Consumes, cs.Requests, cs.InputTokens, cs.OutputTokens, cs.CacheReadTokens = 1, s.Requests, s.InputTokens, s.OutputTokens, s.CacheReadTokens
	cs.UpstreamCostPico = cost
	return k, s, ck, cs, true
}

// ChannelRollupOf is the channel bucket a row falls in and what it adds
// there; ok is false for a row no channel served and for errors.
func ChannelRollupOf(l UsageLog) (ChannelKey, ChannelSums, bool) {
	_, _, ck, cs, ok := Rollups(l)
	return ck, cs, ok
}

// ChannelQuery sums the channel buckets of the whole hours in [Since,
// Until), of one channel or all (0), per UTC day with Granularity "day".
// Days lets it read the daily layer (RollupQuery.Spans).
type ChannelQuery struct {
	Since, Until time.Time
	ChannelID    int64
	Granularity  string
	Days         bool
}

// Spans are the ranges q reads, as RollupQuery.Spans.
func (q ChannelQuery) Spans() []RollupSpan {
	return RollupQuery{Since: q.Since, Until: q.Until, Granularity: q.Granularity, Days: q.Days}.Spans()
}

// ChannelLine is one channel bucket key summed over a query's window (its
// Hour is the period: the day, or zero without a granularity).
// UpstreamCost is the cost in 10⁻¹² dollars, a big integer as in
// RollupLine.
type ChannelLine struct {
	ChannelKey
	ChannelSums
	UpstreamCost *big.Int
}

// Empty reports whether every sum of l is zero (RollupLine.Empty).
func (l ChannelLine) Empty() bool {
	return l.ChannelSums == (ChannelSums{}) && (l.UpstreamCost == nil || l.UpstreamCost.Sign() == 0)
}
