package guardrail

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"
)

// Plugin hooks a guardrail plugin exports.
const (
	HookCheckRequest  = "checkRequest"
	HookCheckResponse = "checkResponse"
)

// PluginRunner runs a guardrail plugin's hook in the plugin sandbox. The
// plugin package implements it; this package never sees the runtime.
type PluginRunner interface {
	// CheckText calls hook of the active version of plugin with ctx. A
	// plugin that does not export hook allows. An error is a plugin that
	// is missing, threw or ran past its deadline.
	CheckText(ctx context.Context, plugin, hook string, in PluginContext) (PluginVerdict, error)
}

// PluginContext is the ctx a guardrail hook receives.
type PluginContext struct {
	Stage    string `json:"stage"`
	Model    string `json:"model"`
	Group    string `json:"group"`
	Text     string `json:"text"`
	Messages any    `json:"messages"`
}

// PluginVerdict is what a guardrail hook returns. Offsets are JavaScript
// string indices (UTF-16 code units) into the text it was given.
type PluginVerdict struct {
	Action     string      `json:"action"`
	Reason     string      `json:"reason"`
	Redactions []Redaction `json:"redactions"`
}

// Redaction replaces [Start, End) of a plugin's text.
type Redaction struct {
	Start       int    `json:"start"`
	End         int    `json:"end"`
	Replacement string `json:"replacement"`
}

// pluginHook is the hook for a stage.
func pluginHook(stage string) string {
	if stage == StageRequest {
		return HookCheckRequest
	}
	return HookCheckResponse
}

// runPlugin asks the plugin about the texts joined by newlines, and maps
// its redactions back onto each text.
func (s *Set) runPlugin(ctx context.Context, g *guard, in Input) (*Record, *Block) {
	joined := joinTexts(in.Texts)
	pc := PluginContext{Stage: in.Stage, Model: in.Model, Group: in.Group, Text: joined}
	if in.Messages != nil {
		pc.Messages = in.Messages()
	}
	verdict, err := s.callPlugin(ctx, g, in.Stage, pc)
	if err != nil {
		return g.pluginFailed(in.Stage)
	}
	switch verdict.Action {
	case ActionBlock:
		rec, block := g.outcome(in.Stage, map[string]int{KindPlugin: 1}, verdictReason(verdict))
		rec.Reason = verdict.Reason
		if block == nil && !g.monitor {
			// A plugin that blocks blocks, whatever the config's action.
			rec.Action = ActionBlock
			block = &Block{Name: g.name, Stage: in.Stage, Reason: verdictReason(verdict)}
		}
		return rec, block
	case ActionRedact:
		spans := byteSpans(joined, verdict.Redactions)
		if len(spans) == 0 {
			return nil, nil
		}
		rec := &Record{Name: g.name, Stage: in.Stage, Action: ActionRedact, Matches: map[string]int{KindPlugin: len(spans)}, Reason: verdict.Reason}
		if g.monitor {
			rec.Action = ActionMonitor
			return rec, nil
		}
		applySpans(in.Texts, spans)
		return rec, nil
	}
	return nil, nil
}

func (s *Set) callPlugin(ctx context.Context, g *guard, stage string, pc PluginContext) (PluginVerdict, error) {
	if s.plugins == nil {
		return PluginVerdict{}, errNoRuntime
	}
	return s.plugins.CheckText(ctx, g.plugin, pluginHook(stage), pc)
}

// pluginFailed applies config.on_error to a plugin that failed: block by
// default (fail closed), or allow; either way the row says so.
func (g *guard) pluginFailed(stage string) (*Record, *Block) {
	counts := map[string]int{"plugin_error": 1}
	if g.failOpen {
		return &Record{Name: g.name, Stage: stage, Action: ActionAllow, Matches: counts}, nil
	}
	return g.outcome(stage, counts, "the guardrail plugin failed")
}

func verdictReason(v PluginVerdict) string {
	if v.Reason != "" {
		return v.Reason
	}
	return "the guardrail plugin refused it"
}

type pluginError string

func (e pluginError) Error() string { return string(e) }

const errNoRuntime = pluginError("guardrail: no plugin runtime")

func joinTexts(texts []*string) string {
	if len(texts) == 1 {
		return *texts[0]
	}
	var b strings.Builder
	for i, t := range texts {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(*t)
	}
	return b.String()
}

// span is a redaction in byte offsets of the joined text.
type span struct {
	start, end int
	repl       string
}

// byteSpans converts UTF-16 redactions to byte offsets of text, dropping
// those out of range or overlapping an earlier one.
func byteSpans(text string, rs []Redaction) []span {
	out := make([]span, 0, len(rs))
	for _, r := range rs {
		if r.Start < 0 || r.End <= r.Start {
			continue
		}
		start, ok1 := utf16ToByte(text, r.Start)
		end, ok2 := utf16ToByte(text, r.End)
		if ok1 && ok2 {
			out = append(out, span{start, end, r.Replacement})
		}
	}
	slices.SortFunc(out, func(a, b span) int { return a.start - b.start })
	kept := out[:0]
	for _, sp := range out {
		if len(kept) == 0 || sp.start >= kept[len(kept)-1].end {
			kept = append(kept, sp)
		}
	}
	return kept
}

// utf16ToByte maps a JavaScript string index of text to a byte offset. An
// index inside a surrogate pair rounds to the character's start.
func utf16ToByte(text string, idx int) (int, bool) {
	units := 0
	for i, r := range text {
		if units >= idx {
			return i, true
		}
		if r >= 0x10000 {
			units += 2
		} else {
			units++
		}
		if units > idx {
			return i, true
		}
	}
	return len(text), units >= idx
}

// applySpans rewrites the texts that were joined with newlines: each span
// is clipped to the texts it covers, and the replacement goes into the
// first.
func applySpans(texts []*string, spans []span) {
	base := 0
	for _, t := range texts {
		n := len(*t)
		var local []span
		for _, sp := range spans {
			st, en := max(sp.start, base)-base, min(sp.end, base+n)-base
			if st > n || en < 0 || st > en || (st == en && sp.start < base) {
				continue
			}
			repl := sp.repl
			if sp.start < base {
				repl = ""
			}
			local = append(local, span{st, en, repl})
		}
		if len(local) > 0 {
			*t = spliceSpans(*t, local)
		}
		base += n + 1
	}
}

func spliceSpans(s string, spans []span) string {
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(sp.repl)
		last = sp.end
	}
	b.WriteString(s[last:])
	if !utf8.ValidString(b.String()) {
		return strings.ToValidUTF8(b.String(), "")
	}
	return b.String()
}
