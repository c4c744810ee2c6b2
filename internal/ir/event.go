package ir

// EventType names a stream event.
type EventType uint8

// Stream events in the order a well-formed stream produces them:
// Start, then for each content block BlockStart, Delta..., BlockStop, then
// Stop, Usage (either order, Usage may repeat), and finally Done.
const (
	EventStart EventType = iota + 1
	EventBlockStart
	EventDelta
	EventBlockStop
	EventStop
	EventUsage
	EventDone
	EventPing
)

// BlockKind is the kind of content block a stream is building.
type BlockKind uint8

// Block kinds in a stream.
const (
	BlockText BlockKind = iota + 1
	BlockThinking
	BlockToolCall
	BlockRedactedThinking
)

// Event is one step of a streamed answer. Index identifies the content block
// (0-based, in the order blocks start) for block events.
type Event struct {
	Type  EventType
	Index int
	Block BlockKind

	// Start
	ID    string
	Model string

	// BlockStart for BlockToolCall: the call's id and function name.
	ToolCallID string
	ToolName   string

	// Delta: Text for text and thinking blocks, ArgumentsDelta for tool
	// calls (a fragment of the JSON arguments), Signature for thinking.
	Text           string
	ArgumentsDelta string
	Signature      string

	// Stop
	StopReason   StopReason
	StopSequence string

	// Usage is cumulative: a later Usage event replaces an earlier one
	// field by field where the later value is non-zero.
	Usage *Usage
}

// Merge folds a later cumulative usage report into u, keeping fields the
// later report leaves at zero. Streams report input early and output late.
func (u *Usage) Merge(later Usage) {
	if later.InputTokens != 0 {
		u.InputTokens = later.InputTokens
	}
	if later.OutputTokens != 0 {
		u.OutputTokens = later.OutputTokens
	}
	if later.CacheReadTokens != 0 {
		u.CacheReadTokens = later.CacheReadTokens
	}
	if later.CacheWriteTokens != 0 {
		u.CacheWriteTokens = later.CacheWriteTokens
	}
	if later.ReasoningTokens != 0 {
		u.ReasoningTokens = later.ReasoningTokens
	}
}
