package responses

import (
	"encoding/base64"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// A JSON null counts as absent everywhere: the official clients send null
// for unset optional fields.
func present(r gjson.Result) bool { return r.Exists() && r.Type != gjson.Null }

func field(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func item(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }

// invalid builds a 400 that names the field in its message too, so a client
// reading only the message still knows what to fix.
func invalid(code, param, format string, args ...any) *ir.Error {
	e := ir.BadRequest(code, format, args...)
	e.Param = param
	if quoted := "'" + param + "'"; param != "" && !strings.Contains(e.Message, quoted) {
		e.Message = quoted + ": " + e.Message
	}
	return e
}

func wrongType(param, want string) *ir.Error {
	return invalid("invalid_type", param, "'%s' must be %s", param, want)
}

func missing(param string) *ir.Error {
	return invalid("missing_required_parameter", param, "'%s' is required", param)
}

// unsupported is the 400 for something valid in the Responses API that a
// channel speaking only chat cannot do.
func unsupported(param, why string) *ir.Error {
	return invalid("unsupported_parameter", param, "'%s' %s; the channel serving this model speaks only chat", param, why)
}

func optString(obj gjson.Result, parent, key string) (string, error) {
	r := obj.Get(key)
	if !present(r) {
		return "", nil
	}
	if r.Type != gjson.String {
		return "", wrongType(field(parent, key), "a string")
	}
	return r.Str, nil
}

func optBool(obj gjson.Result, key string) (*bool, error) {
	r := obj.Get(key)
	if !present(r) {
		return nil, nil
	}
	if r.Type != gjson.True && r.Type != gjson.False {
		return nil, wrongType(key, "a boolean")
	}
	v := r.Bool()
	return &v, nil
}

func optNumber(obj gjson.Result, key string, lo, hi float64) (*float64, error) {
	r := obj.Get(key)
	if !present(r) {
		return nil, nil
	}
	if r.Type != gjson.Number {
		return nil, wrongType(key, "a number")
	}
	if r.Num < lo || r.Num > hi || math.IsNaN(r.Num) {
		return nil, invalid("invalid_value", key, "'%s' must be between %g and %g", key, lo, hi)
	}
	v := r.Num
	return &v, nil
}

func optPositiveInt(obj gjson.Result, key string) (*int, error) {
	r := obj.Get(key)
	if !present(r) {
		return nil, nil
	}
	if r.Type != gjson.Number || r.Num != math.Trunc(r.Num) {
		return nil, wrongType(key, "an integer")
	}
	if r.Num < 1 || r.Num > math.MaxInt32 {
		return nil, invalid("invalid_value", key, "'%s' must be at least 1", key)
	}
	v := int(r.Num)
	return &v, nil
}

// mediaFromURL reads an image or file address: a data URL becomes inline
// base64 data with its media type, anything else stays a URL.
func mediaFromURL(raw, param string) (*ir.Media, error) {
	if !strings.HasPrefix(raw, "data:") {
		if raw == "" {
			return nil, invalid("invalid_value", param, "'%s' must not be empty", param)
		}
		return &ir.Media{URL: raw}, nil
	}
	meta, payload, ok := strings.Cut(raw[len("data:"):], ",")
	if !ok {
		return nil, invalid("invalid_value", param, "'%s' is a malformed data URL", param)
	}
	isBase64 := strings.HasSuffix(meta, ";base64")
	mime, _, _ := strings.Cut(strings.TrimSuffix(meta, ";base64"), ";")
	if !isBase64 {
		plain, err := url.PathUnescape(payload)
		if err != nil {
			return nil, invalid("invalid_value", param, "'%s' is a malformed data URL", param)
		}
		payload = base64.StdEncoding.EncodeToString([]byte(plain))
	}
	if payload == "" {
		return nil, invalid("invalid_value", param, "'%s' carries no data", param)
	}
	return &ir.Media{MIMEType: mime, Data: payload}, nil
}
