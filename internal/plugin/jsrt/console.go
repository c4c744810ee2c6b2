package jsrt

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/grafana/sobek"
)

// Console output limits: plugin logging must not flood the host log.
const (
	maxConsoleLinesPerCall = 64
	maxConsoleLineBytes    = 1024
)

// consoleSink routes console.* calls of one runtime to the host logger.
// Plugin output goes at debug level (warn and error at warn level) because
// it is plugin-authored text the host cannot vet.
type consoleSink struct {
	logger *slog.Logger
	plugin string
	budget int
}

func newConsoleSink(logger *slog.Logger, plugin string) *consoleSink {
	return &consoleSink{logger: logger, plugin: plugin, budget: maxConsoleLinesPerCall}
}

// reset restores the per-call line budget.
func (c *consoleSink) reset() { c.budget = maxConsoleLinesPerCall }

func (c *consoleSink) install(rt *sobek.Runtime) error {
	console := rt.NewObject()
	levels := map[string]slog.Level{
		"log": slog.LevelDebug, "info": slog.LevelDebug, "debug": slog.LevelDebug,
		"warn": slog.LevelWarn, "error": slog.LevelWarn,
	}
	for name, level := range levels {
		if err := console.Set(name, func(call sobek.FunctionCall) sobek.Value {
			c.write(rt, level, call.Arguments)
			return sobek.Undefined()
		}); err != nil {
			return err
		}
	}
	return rt.GlobalObject().DefineDataProperty("console", console, sobek.FLAG_TRUE, sobek.FLAG_TRUE, sobek.FLAG_FALSE)
}

func (c *consoleSink) write(rt *sobek.Runtime, level slog.Level, args []sobek.Value) {
	if c.budget <= 0 {
		return
	}
	c.budget--
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = consoleText(rt, a)
	}
	msg := truncateText(strings.Join(parts, " "), maxConsoleLineBytes)
	c.logger.Log(context.Background(), level, "plugin console", "plugin", c.plugin, "message", msg)
}

var consoleLimits = exportLimits{maxDepth: 8, maxNodes: 256, maxBytes: maxConsoleLineBytes}

// consoleText prints strings as they are and other values as JSON when they
// are small JSON-like values.
func consoleText(rt *sobek.Runtime, v sobek.Value) string {
	if s, ok := v.Export().(string); ok {
		return truncateText(s, maxConsoleLineBytes)
	}
	if out, err := exportValue(rt, v, consoleLimits); err == nil {
		if raw, err := json.Marshal(out); err == nil {
			return string(raw)
		}
	}
	return "[unprintable]"
}
