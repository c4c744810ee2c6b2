package manifest

import (
	"fmt"
	"strings"
)

// Problem is one validation failure, located by the manifest or export path
// it concerns (for example `meta.routes[2].decode` or `exports.renderError`).
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// String renders the problem as "path: message".
func (p Problem) String() string { return p.Path + ": " + p.Message }

// Problems lists every failure found in one validation run; empty means valid.
// The admin API returns all of them at once, so validation never stops at the
// first one.
type Problems []Problem

// Error joins every problem so the list can travel as an error.
func (ps Problems) Error() string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return strings.Join(parts, "; ")
}

// Err returns nil for an empty list, avoiding the typed-nil trap of
// assigning an empty Problems to an error variable.
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// collector accumulates problems during one validation run.
type collector struct {
	problems Problems
}

func (c *collector) addf(path, format string, args ...any) {
	c.problems = append(c.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (c *collector) count() int { return len(c.problems) }
