package openai

import (
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// These helpers read one field of a parsed request and answer a 400 that names
// the field when its JSON type is wrong. A JSON null counts as absent, because
// the official clients send null for unset optional fields.

// present reports whether r holds a value other than null.
func present(r gjson.Result) bool { return r.Exists() && r.Type != gjson.Null }

// field joins a parent parameter path and a key, e.g. "messages[2]" + "role".
func field(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// item names the i-th element of an array parameter.
func item(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }

// invalid builds the 400 for a bad field. The message always names the
// field, so a client reading only the message still knows what to fix.
func invalid(param, format string, args ...any) *ir.Error {
	return invalidCode("invalid_value", param, format, args...)
}

// invalidCode is invalid with the API's finer code (invalid_type,
// missing_required_parameter) that some clients branch on.
func invalidCode(code, param, format string, args ...any) *ir.Error {
	e := ir.BadRequest(code, format, args...)
	e.Param = param
	if quoted := "'" + param + "'"; param != "" && !strings.Contains(e.Message, quoted) {
		e.Message = quoted + ": " + e.Message
	}
	return e
}

func wrongType(param, want string) *ir.Error {
	return invalidCode("invalid_type", param, "'%s' must be %s", param, want)
}

func missing(param string) *ir.Error {
	return invalidCode("missing_required_parameter", param, "'%s' is required", param)
}

func readString(r gjson.Result, param string) (string, error) {
	if r.Type != gjson.String {
		return "", wrongType(param, "a string")
	}
	return r.Str, nil
}

func readBool(r gjson.Result, param string) (bool, error) {
	if r.Type != gjson.True && r.Type != gjson.False {
		return false, wrongType(param, "a boolean")
	}
	return r.Type == gjson.True, nil
}

func readNumber(r gjson.Result, param string) (float64, error) {
	if r.Type != gjson.Number {
		return 0, wrongType(param, "a number")
	}
	return r.Num, nil
}

// readInt accepts integral numbers only; 2.0 is allowed because JSON Schema's
// integer type allows it, 2.5 is not.
func readInt(r gjson.Result, param string) (int64, error) {
	if r.Type != gjson.Number {
		return 0, wrongType(param, "an integer")
	}
	if !strings.ContainsAny(r.Raw, ".eE") {
		n, err := strconv.ParseInt(r.Raw, 10, 64)
		if err != nil {
			return 0, invalid(param, "'%s' is out of range", param)
		}
		return n, nil
	}
	if r.Num != math.Trunc(r.Num) || math.Abs(r.Num) > 1<<53 {
		return 0, wrongType(param, "an integer")
	}
	return int64(r.Num), nil
}

func readObject(r gjson.Result, param string) (gjson.Result, error) {
	if !r.IsObject() {
		return r, wrongType(param, "an object")
	}
	return r, nil
}

func readArray(r gjson.Result, param string) ([]gjson.Result, error) {
	if !r.IsArray() {
		return nil, wrongType(param, "an array")
	}
	return r.Array(), nil
}

// optNumberIn reads an optional number bounded to [lo, hi].
func optNumberIn(obj getter, key string, lo, hi float64) (*float64, error) {
	r := obj.Get(key)
	if !present(r) {
		return nil, nil
	}
	v, err := readNumber(r, key)
	if err != nil {
		return nil, err
	}
	if v < lo || v > hi {
		return nil, invalid(key, "'%s' must be between %g and %g, got %g", key, lo, hi, v)
	}
	return &v, nil
}

// optIntMin reads an optional integer that must be at least lo.
func optIntMin(obj getter, key string, lo int64) (*int64, error) {
	r := obj.Get(key)
	if !present(r) {
		return nil, nil
	}
	v, err := readInt(r, key)
	if err != nil {
		return nil, err
	}
	if v < lo {
		return nil, invalid(key, "'%s' must be at least %d, got %d", key, lo, v)
	}
	return &v, nil
}

// optString reads an optional string field of obj.
func optString(obj getter, parent, key string) (string, error) {
	return memberString(obj.Get(key), parent, key)
}

// memberString is optString for member key's value r, already looked up:
// a gjson.Result passed as a getter is boxed, an allocation each time.
func memberString(r gjson.Result, parent, key string) (string, error) {
	if !present(r) {
		return "", nil
	}
	// The path is built only for the error: most members are strings.
	if r.Type != gjson.String {
		return "", wrongType(field(parent, key), "a string")
	}
	return r.Str, nil
}

// clampInt converts to int, saturating where int is narrower than the value.
func clampInt(v int64) int {
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	if v < math.MinInt32 {
		return math.MinInt32
	}
	return int(v)
}

// getter is a JSON object to read members from: a gjson.Result, or the
// request's members indexed once (members).
type getter interface {
	Get(path string) gjson.Result
}

// members are a request object's top-level members, read in one pass:
// the decoder asks for some twenty of them, and gjson would scan the body
// from its start for each.
type members struct {
	keys []string
	vals []gjson.Result
}

// indexMembers takes an index from a pool, and the decoder gives it back
// once the request is decoded: a fresh one was two thirds of the bytes a
// chat body's decoding allocated (1.7 KiB a call, for two members), and
// every call decodes one.
func indexMembers(obj gjson.Result) *members {
	m := membersPool.Get().(*members)
	obj.ForEach(func(k, v gjson.Result) bool {
		m.keys, m.vals = append(m.keys, k.Str), append(m.vals, v)
		return true
	})
	return m
}

var membersPool = sync.Pool{New: func() any {
	return &members{keys: make([]string, 0, 16), vals: make([]gjson.Result, 0, 16)}
}}

// maxPooledMembers bounds what a pooled index keeps: a body of thousands
// of members must not leave arrays that size behind.
const maxPooledMembers = 64

// release empties m, so it holds no part of the body, and pools it. The
// decoder copies every value it keeps out of m, so nothing refers to m
// after decodeMembers returns.
func (m *members) release() {
	if cap(m.keys) > maxPooledMembers {
		return
	}
	clear(m.keys)
	clear(m.vals)
	m.keys, m.vals = m.keys[:0], m.vals[:0]
	membersPool.Put(m)
}

// Get answers a plain member name, or a dotted path below one, as
// gjson.Result.Get would: the first member of a repeated name wins.
func (m *members) Get(path string) gjson.Result {
	name, rest, dotted := strings.Cut(path, ".")
	for i, k := range m.keys {
		if k != name {
			continue
		}
		if dotted {
			return m.vals[i].Get(rest)
		}
		return m.vals[i]
	}
	return gjson.Result{}
}
