package jsrt

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"

	"github.com/grafana/sobek"
)

// maxUtilInputBytes caps every string a host utility accepts. A running Go
// function cannot be interrupted, so each utility must bound its own work.
const maxUtilInputBytes = 1 << 20

// Host capability names (versioned, matched exactly).
const (
	CapabilityJSONClone      = "json-clone@1"
	CapabilitySubmitSSEDelta = "submit-sse-delta@1"
)

var supportedCapabilities = []string{CapabilityJSONClone, CapabilitySubmitSSEDelta}

// SupportedCapabilities lists the host capabilities plugins may require.
func SupportedCapabilities() []string { return slices.Clone(supportedCapabilities) }

// utilFunc is a host utility: it reads its arguments and either returns a
// value or panics with a JavaScript error object (sobek's way to throw).
type utilFunc func(rt *sobek.Runtime, env *hostEnv, call sobek.FunctionCall) sobek.Value

var utilFuncs = map[string]utilFunc{
	"unixNow":         utilUnixNow,
	"uuid":            utilUUID,
	"hasCapability":   utilHasCapability,
	"hmacSHA256":      utilHMACSHA256,
	"jwtSignHS256":    utilJWTSignHS256,
	"base64":          utilBase64,
	"base64URL":       utilBase64URL,
	"base64URLDecode": utilBase64URLDecode,
	"volcSignV4":      utilVolcSignV4,
}

// installUtils defines the frozen global utils object. Freezing it keeps
// plugins from parking request data on it between calls.
func installUtils(rt *sobek.Runtime, env *hostEnv) error {
	utils := rt.NewObject()
	for _, name := range sortedKeys(utilFuncs) {
		fn := utilFuncs[name]
		wrapped := func(call sobek.FunctionCall) sobek.Value { return fn(rt, env, call) }
		if err := utils.Set(name, wrapped); err != nil {
			return err
		}
	}
	jsonNS := rt.NewObject()
	if err := jsonNS.Set("clone", func(call sobek.FunctionCall) sobek.Value { return utilJSONClone(rt, call) }); err != nil {
		return err
	}
	if err := utils.Set("json", jsonNS); err != nil {
		return err
	}
	freeze, ok := sobek.AssertFunction(rt.GlobalObject().Get("Object").ToObject(rt).Get("freeze"))
	if !ok {
		return fmt.Errorf("jsrt: Object.freeze is missing")
	}
	for _, obj := range []*sobek.Object{jsonNS, utils} {
		if _, err := freeze(sobek.Undefined(), obj); err != nil {
			return err
		}
	}
	return rt.GlobalObject().DefineDataProperty("utils", utils, sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_FALSE)
}

func throwType(rt *sobek.Runtime, format string, args ...any) {
	panic(rt.NewTypeError(fmt.Sprintf(format, args...)))
}

// stringArg reads argument i as a string. Numbers and booleans are converted
// as JavaScript would; missing values, objects and symbols are refused.
func stringArg(rt *sobek.Runtime, call sobek.FunctionCall, i int, fn string) string {
	v := call.Argument(i)
	if sobek.IsUndefined(v) || sobek.IsNull(v) {
		throwType(rt, "utils.%s: argument %d must be a string", fn, i+1)
	}
	if _, isObj := v.(*sobek.Object); isObj {
		throwType(rt, "utils.%s: argument %d must be a string", fn, i+1)
	}
	if _, isSym := v.(*sobek.Symbol); isSym {
		throwType(rt, "utils.%s: argument %d must be a string", fn, i+1)
	}
	if s, ok := v.(sobek.String); ok && s.Length() > maxUtilInputBytes {
		throwType(rt, "utils.%s: argument %d exceeds %d bytes", fn, i+1, maxUtilInputBytes)
	}
	s := v.String()
	if len(s) > maxUtilInputBytes {
		throwType(rt, "utils.%s: argument %d exceeds %d bytes", fn, i+1, maxUtilInputBytes)
	}
	return s
}

// optionalStringArg is stringArg for an argument that may be omitted.
func optionalStringArg(rt *sobek.Runtime, call sobek.FunctionCall, i int, fn string) (string, bool) {
	v := call.Argument(i)
	if sobek.IsUndefined(v) || sobek.IsNull(v) {
		return "", false
	}
	return stringArg(rt, call, i, fn), true
}

// objectArg reads argument i as a plain object (a JSON-like Go map).
func objectArg(rt *sobek.Runtime, call sobek.FunctionCall, i int, fn string) map[string]any {
	v, err := exportValue(rt, call.Argument(i), utilObjectLimits)
	if err != nil {
		throwType(rt, "utils.%s: argument %d: %s", fn, i+1, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		throwType(rt, "utils.%s: argument %d must be an object", fn, i+1)
	}
	return m
}

var utilObjectLimits = exportLimits{maxDepth: 32, maxNodes: 32768, maxBytes: maxUtilInputBytes}

func utilUnixNow(rt *sobek.Runtime, env *hostEnv, _ sobek.FunctionCall) sobek.Value {
	return rt.ToValue(env.now().Unix())
}

func utilUUID(rt *sobek.Runtime, env *hostEnv, _ sobek.FunctionCall) sobek.Value {
	return rt.ToValue(env.uuid())
}

func utilHasCapability(rt *sobek.Runtime, _ *hostEnv, call sobek.FunctionCall) sobek.Value {
	name, _ := optionalStringArg(rt, call, 0, "hasCapability")
	return rt.ToValue(slices.Contains(supportedCapabilities, name))
}

func utilBase64(rt *sobek.Runtime, _ *hostEnv, call sobek.FunctionCall) sobek.Value {
	return rt.ToValue(base64.StdEncoding.EncodeToString([]byte(stringArg(rt, call, 0, "base64"))))
}

func utilBase64URL(rt *sobek.Runtime, _ *hostEnv, call sobek.FunctionCall) sobek.Value {
	return rt.ToValue(base64.RawURLEncoding.EncodeToString([]byte(stringArg(rt, call, 0, "base64URL"))))
}

func utilBase64URLDecode(rt *sobek.Runtime, _ *hostEnv, call sobek.FunctionCall) sobek.Value {
	decoded, err := decodeBase64URL(stringArg(rt, call, 0, "base64URLDecode"))
	if err != nil {
		throwType(rt, "utils.base64URLDecode: %s", err)
	}
	return rt.ToValue(decoded)
}

// utilJSONClone is utils.json.clone (capability json-clone@1): an independent
// mutable deep copy of a JSON value, refused with a TypeError past the
// published limits or for anything JSON cannot represent.
func utilJSONClone(rt *sobek.Runtime, call sobek.FunctionCall) sobek.Value {
	if len(call.Arguments) == 0 {
		throwType(rt, "utils.json.clone: a JSON value is required")
	}
	v, err := exportValue(rt, call.Argument(0), cloneLimits)
	if err != nil {
		throwType(rt, "utils.json.clone: %s", err)
	}
	im := &importer{rt: rt}
	out, err := im.toJS(v, 0)
	if err != nil {
		throwType(rt, "utils.json.clone: %s", err)
	}
	return out
}

// newUUIDv4 returns a random RFC 4122 version 4 UUID.
func newUUIDv4() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
