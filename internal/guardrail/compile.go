package guardrail

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// guard is one compiled guardrail: its scanners built once, its scope and
// stages as flags, so checking a call allocates nothing when nothing
// matches.
type guard struct {
	name, typ         string
	request, response bool
	monitor, redact   bool
	scope             Scope
	scanners          []func(string, []Match) []Match
	maxTokens         int
	plugin            string
	failOpen          bool
	window            int
	replacement       string
}

// compile builds a guard from a stored spec; a spec that no longer
// validates (a pattern this build rejects) is an error.
func compile(s Spec) (*guard, error) {
	cfg, problems := s.Normalize()
	if len(problems) > 0 {
		return nil, fmt.Errorf("guardrail %s: %s", s.Name, strings.Join(problems, "; "))
	}
	g := &guard{name: s.Name, typ: s.Type, monitor: s.Mode == ModeMonitor, redact: cfg.Action == ActionRedact,
		scope: s.AppliesTo, maxTokens: cfg.MaxTokens, plugin: cfg.Plugin, failOpen: cfg.OnError == ActionAllow,
		window: cfg.WindowChars, replacement: cfg.Replacement}
	g.request = slices.Contains(s.Stages, StageRequest)
	g.response = slices.Contains(s.Stages, StageResponse)
	if g.window == 0 {
		g.window = DefaultWindowChars
	}
	if g.replacement == "" {
		g.replacement = "[REDACTED:{kind}]"
	}
	switch s.Type {
	case TypePII:
		var mask piiMask
		for _, k := range piiKinds {
			if len(cfg.Kinds) == 0 || slices.Contains(cfg.Kinds, k) {
				mask |= maskOf[k]
			}
		}
		g.scanners = append(g.scanners, piiScanner(mask))
	case TypeSecrets:
		g.scanners = append(g.scanners, secretScanner(cfg.Kinds))
	case TypeRegex:
		res := make([]*regexp.Regexp, len(cfg.Patterns))
		for i, p := range cfg.Patterns {
			res[i] = regexp.MustCompile(p)
		}
		g.scanners = append(g.scanners, regexScanner(res))
	}
	return g, nil
}

// secretScanner scans for every secret kind, or only those in kinds.
func secretScanner(kinds []string) func(string, []Match) []Match {
	if len(kinds) == 0 {
		return scanSecrets
	}
	return func(s string, dst []Match) []Match {
		n := len(dst)
		dst = scanSecrets(s, dst)
		out := dst[:n]
		for _, m := range dst[n:] {
			if slices.Contains(kinds, m.Kind) {
				out = append(out, m)
			}
		}
		return out
	}
}

// regexScanner reports each pattern's matches as KindPattern. RE2 runs in
// time linear in the text, so a root's pattern cannot stall a call.
func regexScanner(res []*regexp.Regexp) func(string, []Match) []Match {
	return func(s string, dst []Match) []Match {
		for _, re := range res {
			for _, loc := range re.FindAllStringIndex(s, -1) {
				if loc[1] > loc[0] {
					dst = append(dst, Match{Start: loc[0], End: loc[1], Kind: KindPattern})
				}
			}
		}
		return dst
	}
}

// scan runs every scanner of g over s and returns the matches in order
// without overlaps (the earlier, then longer, span wins).
func (g *guard) scan(s string, dst []Match) []Match {
	for _, f := range g.scanners {
		dst = f(s, dst)
	}
	if len(dst) < 2 {
		return dst
	}
	slices.SortFunc(dst, func(a, b Match) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return b.End - a.End
	})
	out := dst[:1]
	for _, m := range dst[1:] {
		if m.Start >= out[len(out)-1].End {
			out = append(out, m)
		}
	}
	return out
}

// on reports whether g checks stage.
func (g *guard) on(stage string) bool {
	if stage == StageRequest {
		return g.request
	}
	return g.response
}

// Call is who makes a call and for which model: what a scope is matched
// against.
type Call struct {
	Group  string
	KeyID  int64
	TeamID int64
	Model  string
}

// covers reports whether the scope includes c.
func (s *Scope) covers(c Call) bool {
	return (len(s.Groups) == 0 || slices.Contains(s.Groups, c.Group)) &&
		(len(s.Keys) == 0 || slices.Contains(s.Keys, c.KeyID)) &&
		(len(s.Teams) == 0 || slices.Contains(s.Teams, c.TeamID)) &&
		(len(s.Models) == 0 || slices.Contains(s.Models, c.Model))
}

// replace returns s with every match replaced by g's replacement.
func (g *guard) replace(s string, ms []Match) string {
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, m := range ms {
		b.WriteString(s[last:m.Start])
		b.WriteString(g.repl(m.Kind))
		last = m.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// repl is the replacement of a span of kind.
func (g *guard) repl(kind string) string {
	return strings.ReplaceAll(g.replacement, "{kind}", kind)
}
