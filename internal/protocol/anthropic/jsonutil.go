package anthropic

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// Error codes for request validation failures.
const (
	codeInvalidJSON = "invalid_json"
	codeMissing     = "missing_required_parameter"
	codeInvalidType = "invalid_type"
	codeInvalidVal  = "invalid_value"
)

func idx(base string, i int) string { return base + "[" + strconv.Itoa(i) + "]" }

func wantString(r gjson.Result, param string) (string, *ir.Error) {
	if r.Type != gjson.String {
		return "", badParam(param, codeInvalidType, "%s: expected a string", param)
	}
	return r.Str, nil
}

func optString(r gjson.Result, param string) (string, *ir.Error) {
	if !r.Exists() || r.Type == gjson.Null {
		return "", nil
	}
	return wantString(r, param)
}

// wantInt accepts integral JSON numbers only ("1024" and "1024.0", not 1.5)
// within the range a float64 represents exactly.
func wantInt(r gjson.Result, param string) (int, *ir.Error) {
	if r.Type != gjson.Number {
		return 0, badParam(param, codeInvalidType, "%s: expected an integer", param)
	}
	f := r.Float()
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, badParam(param, codeInvalidType, "%s: expected an integer", param)
	}
	return int(f), nil
}

func optFloat(r gjson.Result, param string, lo, hi float64) (*float64, *ir.Error) {
	if !r.Exists() || r.Type == gjson.Null {
		return nil, nil
	}
	if r.Type != gjson.Number {
		return nil, badParam(param, codeInvalidType, "%s: expected a number", param)
	}
	f := r.Float()
	if f < lo || f > hi || math.IsNaN(f) {
		return nil, badParam(param, codeInvalidVal, "%s: must be between %g and %g", param, lo, hi)
	}
	return &f, nil
}

func optBool(r gjson.Result, param string) (bool, *ir.Error) {
	switch r.Type {
	case gjson.True:
		return true, nil
	case gjson.False, gjson.Null:
		return false, nil
	}
	if !r.Exists() {
		return false, nil
	}
	return false, badParam(param, codeInvalidType, "%s: expected a boolean", param)
}

func wantObject(r gjson.Result, param string) *ir.Error {
	if !r.IsObject() {
		return badParam(param, codeInvalidType, "%s: expected an object", param)
	}
	return nil
}

// compactRaw returns raw JSON text without insignificant whitespace, falling
// back to the input when it does not parse (gjson hands out valid slices of an
// already validated document, so that does not happen in practice).
func compactRaw(raw string) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(raw)); err != nil {
		return raw
	}
	return buf.String()
}

// rawOrNil keeps an optional JSON value verbatim, nil when absent or null.
func rawOrNil(r gjson.Result) json.RawMessage {
	if !r.Exists() || r.Type == gjson.Null {
		return nil
	}
	return json.RawMessage(compactRaw(r.Raw))
}
