package manifest

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// The JS runtime hands meta over as plain decoded JSON-like values. These
// helpers read them without assuming which numeric type the runtime chose.

func objectOf(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	return m, ok
}

func arrayOf(v any) ([]any, bool) {
	a, ok := v.([]any)
	return a, ok
}

// maxSafeInteger is the largest integer a JS number holds exactly.
const maxSafeInteger = 1<<53 - 1

// integerOf reports v as an integer when it is a whole number.
func integerOf(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) || n != math.Trunc(n) || math.Abs(n) > maxSafeInteger {
			return 0, false
		}
		return int64(n), true
	case float32:
		return integerOf(float64(n))
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case json.Number:
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return i, true
		}
		f, err := n.Float64()
		if err != nil {
			return 0, false
		}
		return integerOf(f)
	}
	return 0, false
}

// Number reports a plugin-supplied value (any numeric Go type a JSON or
// JS value decodes to) as a finite float.
func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case float32:
		return Number(float64(n))
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		if err != nil {
			return 0, false
		}
		return Number(f)
	}
	return 0, false
}

// kindOf names a value's JSON kind for error messages.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	if _, ok := Number(v); ok {
		return "a number"
	}
	return fmt.Sprintf("an unsupported %T", v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func at(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

func dot(path, name string) string { return path + "." + name }

// hasControl reports control characters or invalid UTF-8, which must never reach admin pages
// or logs from plugin-supplied text.
func hasControl(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}
