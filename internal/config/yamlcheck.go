package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlProblems turns a decoding error into one problem per finding. The
// YAML library reads on after an unknown key or a value of the wrong type
// and reports them all with their lines; only a syntax error stops it.
// An unknown key gets the closest known one as a suggestion.
func yamlProblems(err error) []string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return []string{err.Error()}
	}
	out := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		out = append(out, withSuggestion(e))
	}
	return out
}

var unknownField = regexp.MustCompile(`field (\S+) not found in type`)

func withSuggestion(msg string) string {
	m := unknownField.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	msg = strings.Replace(msg, m[0], "unknown setting "+m[1]+" (in type", 1) + ")"
	if best := closestKey(m[1]); best != "" {
		msg += fmt.Sprintf("; did you mean %q?", best)
	}
	return msg
}

// knownKeys are the YAML keys of every settings struct, gathered once.
var knownKeys = func() []string {
	seen := map[string]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen["type:"+t.String()] {
			return
		}
		seen["type:"+t.String()] = true
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name != "" && name != "-" {
				seen[name] = true
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeOf(Config{}))
	var out []string
	for k := range seen {
		if !strings.HasPrefix(k, "type:") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}()

// closestKey is the known key nearest to name, if near enough to be a typo.
func closestKey(name string) string {
	best, bestD := "", len(name)/2+1
	if bestD > 3 {
		bestD = 3
	}
	for _, k := range knownKeys {
		if d := editDistance(name, k); d < bestD || (d == bestD && best == "" && d <= 2) {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Lines maps places in the file to their line: a top-level key ("redis"),
// a list entry ("channels[2]") or a map entry ("models.gpt-4o"). Problems
// found after decoding (the seed checks) name their line with it.
type Lines map[string]int

// FileLines reads the lines of a YAML file's keys and entries; a file that
// does not parse gives none.
func FileLines(raw []byte) Lines {
	out := Lines{}
	var doc yaml.Node
	if yaml.Unmarshal(raw, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return out
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		key, val := top.Content[i], top.Content[i+1]
		out[key.Value] = key.Line
		switch val.Kind {
		case yaml.SequenceNode:
			for j, item := range val.Content {
				out[fmt.Sprintf("%s[%d]", key.Value, j)] = item.Line
			}
		case yaml.MappingNode:
			for j := 0; j+1 < len(val.Content); j += 2 {
				out[key.Value+"."+val.Content[j].Value] = val.Content[j].Line
			}
		}
	}
	return out
}

// At prefixes msg with the line of place, when the file has it.
func (l Lines) At(place, msg string) string {
	if n, ok := l[place]; ok {
		return fmt.Sprintf("line %d: %s", n, msg)
	}
	return msg
}
