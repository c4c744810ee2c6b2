package ir

// StopReason is why generation ended, in a format-neutral vocabulary.
type StopReason string

// Stop reasons. Codecs map these to finish_reason / stop_reason /
// finishReason and back.
const (
	StopEnd           StopReason = "end"
	StopMaxTokens     StopReason = "max_tokens"
	StopToolUse       StopReason = "tool_use"
	StopSequence      StopReason = "stop_sequence"
	StopContentFilter StopReason = "content_filter"
	StopError         StopReason = "error"
)

// Response is a complete (non-streamed) model answer.
type Response struct {
	ID      string
	Model   string
	Created int64
	// Content is the assistant turn's parts in order.
	Content    []Part
	StopReason StopReason
	// StopSequence is the matched stop sequence, when known.
	StopSequence string
	Usage        Usage
}

// Usage counts tokens. InputTokens includes cached tokens (CacheReadTokens
// and CacheWriteTokens are subsets of it), the OpenAI convention; codecs for
// formats that report cache tokens separately add or subtract them.
type Usage struct {
	InputTokens      int
	OutputTokens     int
	CacheReadTokens  int
	CacheWriteTokens int
	ReasoningTokens  int
}

// Total is input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// IsZero reports whether nothing was counted.
func (u Usage) IsZero() bool { return u == Usage{} }

// NonNegative returns u with negative counts (a broken or hostile upstream
// report) raised to zero, so usage can never turn a charge into a payout.
func (u Usage) NonNegative() Usage {
	u.InputTokens = max(u.InputTokens, 0)
	u.OutputTokens = max(u.OutputTokens, 0)
	u.CacheReadTokens = max(u.CacheReadTokens, 0)
	u.CacheWriteTokens = max(u.CacheWriteTokens, 0)
	u.ReasoningTokens = max(u.ReasoningTokens, 0)
	return u
}
