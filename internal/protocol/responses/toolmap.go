package responses

import (
	"encoding/json"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// ToolMap records how the request's Responses tools became plain IR
// functions, so that the answer goes back to the client in the kinds it
// declared: a custom (freeform) tool's call as a custom_tool_call, a
// namespaced function's call under its namespace again.
type ToolMap struct {
	// Custom holds the names of custom tools; each became a function taking
	// one string argument, customArg.
	Custom map[string]bool `json:"custom,omitempty"`
	// Spaced maps a flattened function name to its namespace and name.
	Spaced map[string]SpacedName `json:"spaced,omitempty"`
	// Dropped lists the hosted tools (by type) a chat channel cannot run;
	// they are left out of the converted request and named in the usage row.
	Dropped []string `json:"dropped,omitempty"`
	flat    map[SpacedName]string
}

// SpacedName is a function inside a namespace tool group.
type SpacedName struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// customArg is the one argument a custom tool's function takes.
const customArg = "input"

// maxToolName is the longest function name every chat wire accepts.
const maxToolName = 64

// customSchema is the parameters of a custom tool's function.
var customSchema = json.RawMessage(`{"type":"object","properties":{"` + customArg +
	`":{"type":"string","description":"The raw input for the tool, exactly as its description asks for it."}},"required":["` +
	customArg + `"],"additionalProperties":false}`)

func (m *ToolMap) addCustom(name string) {
	if m.Custom == nil {
		m.Custom = map[string]bool{}
	}
	m.Custom[name] = true
}

// IsCustom reports whether the IR function name is a custom tool.
func (m *ToolMap) IsCustom(name string) bool { return m != nil && m.Custom[name] }

// flatten returns the plain function name for a namespaced function:
// namespace and name joined by "__" (Codex's MCP namespaces already end in
// it), cut to the length every wire allows, unique within the request.
func (m *ToolMap) flatten(ns, name string) string {
	key := SpacedName{Namespace: ns, Name: name}
	if f, ok := m.flat[key]; ok {
		return f
	}
	joined := ns + "__" + name
	if strings.HasSuffix(ns, "__") || ns == "" {
		joined = ns + name
	}
	f := sanitizeName(joined)
	if _, taken := m.Spaced[f]; taken || len(f) > maxToolName {
		h := fnv.New32a()
		_, _ = h.Write([]byte(ns + "\x00" + name))
		suffix := "_" + strconv.FormatUint(uint64(h.Sum32()), 36)
		f = f[:min(len(f), maxToolName-len(suffix))] + suffix
	}
	if m.Spaced == nil {
		m.Spaced, m.flat = map[string]SpacedName{}, map[SpacedName]string{}
	}
	m.Spaced[f], m.flat[key] = key, f
	return f
}

// Restore returns the namespace and name a function name stands for; ns is
// empty for a function that was not in a namespace.
func (m *ToolMap) Restore(name string) (ns, orig string) {
	if m != nil {
		if s, ok := m.Spaced[name]; ok {
			return s.Namespace, s.Name
		}
	}
	return "", name
}

// sanitizeName keeps the characters function names may hold on every wire.
func sanitizeName(s string) string {
	ok := func(r rune) bool {
		return r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
	}
	if strings.IndexFunc(s, func(r rune) bool { return !ok(r) }) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if ok(r) {
			return r
		}
		return '_'
	}, s)
}

// customInput is the raw input of a custom tool call from the arguments the
// model gave its function; arguments that are not the expected object are
// passed on whole, so nothing the model wrote is lost.
func customInput(args string) string {
	v := gjson.Get(args, customArg)
	if gjson.Valid(args) && v.Type == gjson.String {
		return v.Str
	}
	return args
}

// customArguments wraps a custom tool call's raw input as its function's
// arguments.
func customArguments(input string) string {
	b, _ := json.Marshal(map[string]string{customArg: input})
	return string(b)
}
