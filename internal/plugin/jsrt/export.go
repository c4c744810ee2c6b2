package jsrt

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/sobek"
)

// exportLimits bound one conversion of a JavaScript value into Go.
type exportLimits struct {
	maxDepth int
	maxNodes int
	maxBytes int // estimated JSON-encoded size
	// strict refuses what JSON would silently drop or coerce: undefined,
	// holes in arrays, non-finite numbers and non-plain objects.
	strict bool
}

// resultLimits apply to hook results and the manifest: generous, but a hook
// cannot hand the host an unbounded graph.
var resultLimits = exportLimits{maxDepth: 128, maxNodes: 1 << 20, maxBytes: 64 << 20}

// cloneLimits are the published limits of utils.json.clone.
var cloneLimits = exportLimits{maxDepth: 32, maxNodes: 32768, maxBytes: 1 << 20, strict: true}

var promiseType = reflect.TypeOf((*sobek.Promise)(nil))

// maxSafeInteger is 2^53, the largest range in which a float64 holds every
// integer exactly.
const maxSafeInteger = 1 << 53

// exporter converts JavaScript values into plain Go JSON-like values.
type exporter struct {
	lim       exportLimits
	nodes     int
	bytes     int
	ancestors []*sobek.Object
	path      []string
}

// valueError is a conversion failure located by a JSON-path-like string.
type valueError struct {
	path string
	msg  string
}

func (e *valueError) Error() string { return e.path + ": " + e.msg }

func (e *exporter) fail(format string, args ...any) error {
	return &valueError{path: "$" + strings.Join(e.path, ""), msg: fmt.Sprintf(format, args...)}
}

// exportValue converts v inside rt.Try so that exceptions thrown by getters or
// proxy traps become errors instead of unwinding through Go code.
func exportValue(rt *sobek.Runtime, v sobek.Value, lim exportLimits) (out any, err error) {
	e := &exporter{lim: lim}
	if ex := rt.Try(func() { out, err = e.export(v, 0) }); ex != nil {
		return nil, ex
	}
	return out, err
}

func (e *exporter) export(v sobek.Value, depth int) (any, error) {
	e.nodes++
	if e.nodes > e.lim.maxNodes {
		return nil, e.fail("value has more than %d nodes", e.lim.maxNodes)
	}
	out, err := e.exportNode(v, depth)
	if err == nil && e.bytes > e.lim.maxBytes {
		return nil, e.fail("value is larger than %d bytes when encoded", e.lim.maxBytes)
	}
	return out, err
}

func (e *exporter) exportNode(v sobek.Value, depth int) (any, error) {
	if v == nil || sobek.IsUndefined(v) {
		if e.lim.strict {
			return nil, e.fail("undefined is not a JSON value")
		}
		e.bytes += 4
		return nil, nil
	}
	if sobek.IsNull(v) {
		e.bytes += 4
		return nil, nil
	}
	if obj, ok := v.(*sobek.Object); ok {
		return e.exportObject(obj, depth)
	}
	return e.exportPrimitive(v)
}

func (e *exporter) exportPrimitive(v sobek.Value) (any, error) {
	if _, isSym := v.(*sobek.Symbol); isSym {
		return nil, e.fail("symbols are not JSON values")
	}
	switch x := v.Export().(type) {
	case bool:
		e.bytes += 5
		return x, nil
	case string:
		e.bytes += len(x) + 2
		return x, nil
	case int64:
		e.bytes += 8
		return x, nil
	case float64:
		return e.exportNumber(x)
	case *big.Int:
		return nil, e.fail("BigInt is not a JSON value")
	default:
		return nil, e.fail("unsupported value of type %T", x)
	}
}

func (e *exporter) exportNumber(f float64) (any, error) {
	e.bytes += 8
	if math.IsNaN(f) || math.IsInf(f, 0) {
		if e.lim.strict {
			return nil, e.fail("%v is not a JSON number", f)
		}
		return nil, nil // what JSON.stringify produces
	}
	if f == math.Trunc(f) && math.Abs(f) <= maxSafeInteger {
		return int64(f), nil
	}
	return f, nil
}

func (e *exporter) exportObject(obj *sobek.Object, depth int) (any, error) {
	if _, isFn := sobek.AssertFunction(obj); isFn {
		return nil, e.fail("functions are not JSON values")
	}
	if depth >= e.lim.maxDepth {
		return nil, e.fail("value is nested deeper than %d levels", e.lim.maxDepth)
	}
	for _, a := range e.ancestors {
		if a == obj {
			return nil, e.fail("value contains a cycle")
		}
	}
	e.ancestors = append(e.ancestors, obj)
	defer func() { e.ancestors = e.ancestors[:len(e.ancestors)-1] }()
	if obj.ExportType() == promiseType {
		return nil, e.fail("a Promise is not a JSON value: hooks must be synchronous")
	}
	switch class := obj.ClassName(); class {
	case "Array":
		return e.exportArray(obj, depth)
	case "Object":
		return e.exportMap(obj, depth)
	case "Date":
		if e.lim.strict {
			return nil, e.fail("Date objects are not JSON values")
		}
		return e.exportDate(obj)
	default:
		if e.lim.strict {
			return nil, e.fail("%s objects are not JSON values", class)
		}
		return e.exportMap(obj, depth)
	}
}

func (e *exporter) exportDate(obj *sobek.Object) (any, error) {
	t, ok := obj.Export().(time.Time)
	if !ok {
		return nil, e.fail("invalid Date")
	}
	s := t.UTC().Format("2006-01-02T15:04:05.000Z")
	e.bytes += len(s) + 2
	return s, nil
}

func (e *exporter) exportArray(obj *sobek.Object, depth int) (any, error) {
	n := obj.Get("length").ToInteger()
	if n < 0 || n > int64(e.lim.maxNodes-e.nodes) {
		return nil, e.fail("array has more than %d elements", e.lim.maxNodes)
	}
	if e.lim.strict && countIndexKeys(obj.Keys(), n) != n {
		return nil, e.fail("sparse arrays are not JSON values")
	}
	out := make([]any, n)
	e.bytes += 2
	for i := range n {
		e.path = append(e.path, "["+strconv.FormatInt(i, 10)+"]")
		item, err := e.export(obj.Get(strconv.FormatInt(i, 10)), depth+1)
		e.path = e.path[:len(e.path)-1]
		if err != nil {
			return nil, err
		}
		out[i] = item
		e.bytes++
	}
	return out, nil
}

func (e *exporter) exportMap(obj *sobek.Object, depth int) (any, error) {
	keys := obj.Keys()
	out := make(map[string]any, len(keys))
	e.bytes += 2
	for _, k := range keys {
		val := obj.Get(k)
		if (val == nil || sobek.IsUndefined(val)) && !e.lim.strict {
			continue // JSON drops undefined members
		}
		e.path = append(e.path, "."+k)
		item, err := e.export(val, depth+1)
		e.path = e.path[:len(e.path)-1]
		if err != nil {
			return nil, err
		}
		out[k] = item
		e.bytes += len(k) + 4
	}
	return out, nil
}

// countIndexKeys counts the keys that name an array index below n, which
// equals n exactly when the array has no holes.
func countIndexKeys(keys []string, n int64) int64 {
	var count int64
	for _, k := range keys {
		i, err := strconv.ParseInt(k, 10, 64)
		if err == nil && i >= 0 && i < n && strconv.FormatInt(i, 10) == k {
			count++
		}
	}
	return count
}
