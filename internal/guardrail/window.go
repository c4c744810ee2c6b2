package guardrail

import (
	"context"
	"unicode/utf8"
)

// Window checks a streamed answer as it passes. Text is held until the
// window of text behind it has arrived and been checked, so a match split
// across chunks is complete before any of it is released: it is redacted,
// or the stream is stopped, before the client sees a byte of it. A match
// longer than the window (a whole private key block) is caught from its
// start, since each check sees the whole held text.
type Window struct {
	set    *Set
	guards []*guard
	call   Call
	size   int
	held   string
	// records accumulate per guard, in guard order.
	records []Record
	// monitorOnly: every guard only records, so text is released at once
	// and the window only keeps the tail a split match needs.
	monitorOnly bool
}

// NewWindow returns the window for a streamed answer of c, or nil when no
// guardrail checks its response.
func (s *Set) NewWindow(c Call) *Window {
	if s == nil {
		return nil
	}
	w := &Window{set: s, call: c, monitorOnly: true}
	for _, g := range s.guards {
		if g.response && g.scope.covers(c) {
			w.guards = append(w.guards, g)
			w.size = max(w.size, g.window)
			w.monitorOnly = w.monitorOnly && g.monitor
		}
	}
	if len(w.guards) == 0 {
		return nil
	}
	w.records = make([]Record, len(w.guards))
	return w
}

// Size is the window in characters.
func (w *Window) Size() int { return w.size }

// Write adds text and returns what may be released now; a non-nil Block
// ends the stream, and then nothing held may be released.
func (w *Window) Write(ctx context.Context, text string) (string, *Block) {
	w.held += text
	cut := cutPoint(w.held, w.size)
	if w.monitorOnly {
		if cut > 0 {
			w.release(ctx, cut, false)
		}
		return text, nil
	}
	if cut == 0 {
		return "", nil
	}
	return w.release(ctx, cut, false)
}

// Flush checks and releases everything held: the answer (or its block)
// ended.
func (w *Window) Flush(ctx context.Context) (string, *Block) {
	if w.held == "" {
		return "", nil
	}
	if w.monitorOnly {
		w.release(ctx, len(w.held), true)
		return "", nil
	}
	return w.release(ctx, len(w.held), true)
}

// release checks the held text and releases it up to cut, extended past
// any redaction that straddles it.
func (w *Window) release(ctx context.Context, cut int, final bool) (string, *Block) {
	for i, g := range w.guards {
		var block *Block
		cut, block = w.apply(ctx, i, g, cut, final)
		if block != nil {
			w.held = ""
			return "", block
		}
	}
	out := w.held[:cut]
	w.held = w.held[cut:]
	return out, nil
}

// apply runs one guard over the held text. Matches that start before cut
// are acted on now (they had the whole window to complete); later ones
// wait, except that a blocking guard stops at any match.
func (w *Window) apply(ctx context.Context, i int, g *guard, cut int, final bool) (int, *Block) {
	if g.typ == TypePlugin {
		return w.applyPlugin(ctx, i, g, cut)
	}
	var buf [8]Match
	ms := g.scan(w.held, buf[:0])
	if len(ms) == 0 {
		return cut, nil
	}
	blocks := !g.monitor && !g.redact
	n := 0
	for _, m := range ms {
		if m.Start < cut || final || blocks {
			ms[n] = m
			n++
		}
	}
	ms = ms[:n]
	if n == 0 {
		return cut, nil
	}
	rec, block := g.outcome(StageResponse, nil, "")
	w.count(i, rec.Action, ms)
	if block != nil {
		block.Reason = "it contains " + kindList(w.records[i].Matches)
		return cut, block
	}
	if rec.Action == ActionRedact {
		cut = shiftedCut(g, ms, cut)
		w.held = g.replace(w.held, ms)
	}
	return cut, nil
}

// shiftedCut is cut once ms are replaced: moved by the length change of
// the spans before it, and past the replacement of one that straddles it.
func shiftedCut(g *guard, ms []Match, cut int) int {
	delta := 0
	for _, m := range ms {
		rl := len(g.repl(m.Kind))
		switch {
		case m.End <= cut:
			delta += rl - (m.End - m.Start)
		case m.Start < cut:
			return m.Start + delta + rl
		default:
			return cut + delta
		}
	}
	return cut + delta
}

// applyPlugin gives the plugin the held window; its redactions may fall
// anywhere in it.
func (w *Window) applyPlugin(ctx context.Context, i int, g *guard, cut int) (int, *Block) {
	texts := []*string{&w.held}
	before := len(w.held)
	rec, block := w.set.runPlugin(ctx, g, Input{Call: w.call, Stage: StageResponse, Texts: texts})
	if rec != nil {
		w.merge(i, *rec)
	}
	if block != nil {
		return cut, block
	}
	return min(len(w.held), max(0, cut+len(w.held)-before)), nil
}

func (w *Window) count(i int, action string, ms []Match) {
	r := &w.records[i]
	if r.Matches == nil {
		*r = Record{Name: w.guards[i].name, Stage: StageResponse, Action: action, Matches: map[string]int{}}
	}
	for _, m := range ms {
		r.Matches[m.Kind]++
	}
}

func (w *Window) merge(i int, rec Record) {
	r := &w.records[i]
	if r.Matches == nil {
		*r = rec
		return
	}
	for k, v := range rec.Matches {
		r.Matches[k] += v
	}
	r.Action = rec.Action
}

// Records is what fired on the stream so far.
func (w *Window) Records() []Record {
	if w == nil {
		return nil
	}
	var out []Record
	for _, r := range w.records {
		if r.Matches != nil {
			out = append(out, r)
		}
	}
	return out
}

// cutPoint is the byte offset up to which text may be released: all but
// the last size characters, moved back to a space or line break when one
// is near so a number or a word is not split for the next check.
func cutPoint(text string, size int) int {
	if len(text) <= size {
		return 0
	}
	i := len(text)
	for n := 0; n < size && i > 0; n++ {
		_, w := utf8.DecodeLastRuneInString(text[:i])
		i -= w
	}
	for k := i; k > 0 && i-k < 64; k-- {
		if c := text[k-1]; c == ' ' || c == '\n' || c == '\t' {
			return k
		}
	}
	return i
}

// Fired reports whether any guardrail found something in the stream so
// far.
func (w *Window) Fired() bool {
	for _, r := range w.records {
		if r.Matches != nil {
			return true
		}
	}
	return false
}
