package jsrt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/grafana/sobek"
)

// maxInputDepth bounds the nesting of hook arguments built from Go values.
const maxInputDepth = 128

// importer builds fresh JavaScript values from Go JSON-like values. Every
// object and array is new, so nothing the plugin does to them can reach the
// caller's Go values; with freeze set they are also deeply frozen, which makes
// request and state inputs read-only as the contract requires.
type importer struct {
	rt     *sobek.Runtime
	freeze sobek.Callable
}

func (im *importer) toJS(v any, depth int) (sobek.Value, error) {
	if depth > maxInputDepth {
		return nil, fmt.Errorf("input is nested deeper than %d levels", maxInputDepth)
	}
	switch x := v.(type) {
	case nil:
		return sobek.Null(), nil
	case bool, string, int, int8, int16, int32, int64, uint8, uint16, uint32:
		return im.rt.ToValue(x), nil
	case uint:
		return im.uintToJS(uint64(x)), nil
	case uint64:
		return im.uintToJS(x), nil
	case float32:
		return im.floatToJS(float64(x))
	case float64:
		return im.floatToJS(x)
	case json.Number:
		return im.numberToJS(x)
	case json.RawMessage:
		return im.rawToJS(x, depth)
	case map[string]any:
		return im.objectToJS(sortedKeys(x), func(k string) any { return x[k] }, depth)
	case map[string]string:
		return im.objectToJS(sortedKeys(x), func(k string) any { return x[k] }, depth)
	case map[string][]string:
		return im.objectToJS(sortedKeys(x), func(k string) any { return x[k] }, depth)
	case []any:
		return im.arrayToJS(len(x), func(i int) any { return x[i] }, depth)
	case []string:
		return im.arrayToJS(len(x), func(i int) any { return x[i] }, depth)
	case []map[string]any:
		return im.arrayToJS(len(x), func(i int) any { return x[i] }, depth)
	default:
		return im.viaJSON(v, depth)
	}
}

func (im *importer) uintToJS(u uint64) sobek.Value {
	if u > math.MaxInt64 {
		return im.rt.ToValue(float64(u))
	}
	return im.rt.ToValue(int64(u))
}

func (im *importer) floatToJS(f float64) (sobek.Value, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%v is not a JSON number", f)
	}
	return im.rt.ToValue(f), nil
}

func (im *importer) numberToJS(n json.Number) (sobek.Value, error) {
	if i, err := n.Int64(); err == nil {
		return im.rt.ToValue(i), nil
	}
	f, err := n.Float64()
	if err != nil {
		return nil, fmt.Errorf("invalid JSON number %q", string(n))
	}
	return im.floatToJS(f)
}

func (im *importer) rawToJS(raw json.RawMessage, depth int) (sobek.Value, error) {
	if len(raw) == 0 {
		return sobek.Null(), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON input: %w", err)
	}
	return im.toJS(v, depth)
}

// viaJSON handles structs and other Go types by their JSON encoding, which is
// how the host would send them over the wire anyway.
func (im *importer) viaJSON(v any, depth int) (sobek.Value, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("input of type %T is not JSON-encodable: %w", v, err)
	}
	return im.rawToJS(raw, depth)
}

func (im *importer) objectToJS(keys []string, get func(string) any, depth int) (sobek.Value, error) {
	obj := im.rt.NewObject()
	for _, k := range keys {
		val, err := im.toJS(get(k), depth+1)
		if err != nil {
			return nil, err
		}
		// A data property, not Set: a "__proto__" key must stay a plain member
		// instead of replacing the object's prototype.
		if err := obj.DefineDataProperty(k, val, sobek.FLAG_TRUE, sobek.FLAG_TRUE, sobek.FLAG_TRUE); err != nil {
			return nil, err
		}
	}
	return im.seal(obj)
}

func (im *importer) arrayToJS(n int, get func(int) any, depth int) (sobek.Value, error) {
	items := make([]any, n)
	for i := range n {
		val, err := im.toJS(get(i), depth+1)
		if err != nil {
			return nil, err
		}
		items[i] = val
	}
	return im.seal(im.rt.NewArray(items...))
}

func (im *importer) seal(obj *sobek.Object) (sobek.Value, error) {
	if im.freeze == nil {
		return obj, nil
	}
	if _, err := im.freeze(sobek.Undefined(), obj); err != nil {
		return nil, err
	}
	return obj, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
