package guardrail

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Record is what one guardrail did on a call, for the usage row's
// other.guardrails: the kinds it found and how often, never the text.
type Record struct {
	Name    string         `json:"name"`
	Stage   string         `json:"stage"`
	Action  string         `json:"action"`
	Matches map[string]int `json:"matches"`
	// Reason is a plugin's own word for its verdict.
	Reason string `json:"reason,omitempty"`
}

// Block is a call a guardrail in enforce mode stopped.
type Block struct {
	Name, Stage, Reason string
}

// Message is the client-facing explanation: the guardrail's name and what
// it found, never the matched text.
func (b *Block) Message() string {
	what := "the request"
	if b.Stage == StageResponse {
		what = "the answer"
	}
	// The code leads the message too: the messages dialect's error has
	// no code member of its own.
	return fmt.Sprintf("guardrail_blocked: %s was blocked by guardrail %q: %s", what, b.Name, b.Reason)
}

// Verdict is the outcome of one stage's check.
type Verdict struct {
	// Blocked is set when an enforced guardrail refused the call.
	Blocked *Block
	// Redacted says some text was rewritten in place.
	Redacted bool
	Records  []Record
}

// Input is the text a stage checks. Texts are rewritten in place when a
// guardrail redacts.
type Input struct {
	Call
	Stage string
	Texts []*string
	// Tokens counts the prompt (request stage; nil: not counted).
	Tokens func() int
	// Messages is the conversation as a plugin sees it (nil: none).
	Messages func() any
}

// Check runs every guardrail of the set that applies to in's call and
// stage, in the order they were created, and stops at the first that
// blocks.
func (s *Set) Check(ctx context.Context, in Input) Verdict {
	var v Verdict
	if s == nil {
		return v
	}
	for _, g := range s.guards {
		if !g.on(in.Stage) || !g.scope.covers(in.Call) {
			continue
		}
		rec, block := s.run(ctx, g, in)
		if rec == nil {
			continue
		}
		v.Records = append(v.Records, *rec)
		if rec.Action == ActionRedact {
			v.Redacted = true
		}
		if block != nil {
			v.Blocked = block
			return v
		}
	}
	return v
}

// Applies reports whether any guardrail checks stage for c, so a caller
// can skip gathering the text.
func (s *Set) Applies(c Call, stage string) bool {
	if s == nil {
		return false
	}
	for _, g := range s.guards {
		if g.on(stage) && g.scope.covers(c) {
			return true
		}
	}
	return false
}

// run applies one guard; a nil record means it found nothing.
func (s *Set) run(ctx context.Context, g *guard, in Input) (*Record, *Block) {
	switch g.typ {
	case TypeMaxTokens:
		if in.Tokens == nil {
			return nil, nil
		}
		n := in.Tokens()
		if n <= g.maxTokens {
			return nil, nil
		}
		return g.outcome(in.Stage, map[string]int{KindTokens: n}, fmt.Sprintf("the prompt has %d tokens, more than %d", n, g.maxTokens))
	case TypePlugin:
		return s.runPlugin(ctx, g, in)
	}
	var buf [8]Match
	var counts map[string]int
	for _, t := range in.Texts {
		ms := g.scan(*t, buf[:0])
		if len(ms) == 0 {
			continue
		}
		if counts == nil {
			counts = map[string]int{}
		}
		for _, m := range ms {
			counts[m.Kind]++
		}
		if g.redact && !g.monitor {
			*t = g.replace(*t, ms)
		}
	}
	if counts == nil {
		return nil, nil
	}
	return g.outcome(in.Stage, counts, "it contains "+kindList(counts))
}

// outcome turns what g found into its record and, when g blocks, the
// block.
func (g *guard) outcome(stage string, counts map[string]int, reason string) (*Record, *Block) {
	rec := &Record{Name: g.name, Stage: stage, Matches: counts}
	switch {
	case g.monitor:
		rec.Action = ActionMonitor
	case g.redact:
		rec.Action = ActionRedact
	default:
		rec.Action = ActionBlock
		return rec, &Block{Name: g.name, Stage: stage, Reason: reason}
	}
	return rec, nil
}

// kindList names the kinds found, sorted, for a refusal's message.
func kindList(counts map[string]int) string {
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return strings.Join(kinds, ", ")
}
