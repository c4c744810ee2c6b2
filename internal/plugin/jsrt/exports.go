package jsrt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/grafana/sobek"
)

// Exports describes what a plugin module exports.
type Exports struct {
	// Meta is the exported meta value as a plain Go value (map[string]any,
	// []any, string, int64, float64, bool or nil); nil when meta is missing.
	Meta any
	// Functions lists the dotted path of every exported function: top-level
	// functions ("buildSubmitRequest"), functions of the native object
	// ("native.decodeSubmit") and of each protocol object
	// ("protocols.std_video.decodeRequest"). Sorted.
	Functions []string
	// ExportNames lists every export name of the module, functions or not,
	// so a validator can refuse unknown or retired exports. Sorted.
	ExportNames []string
}

// ErrNoSuchHook reports a call to a path that is not an exported function.
var ErrNoSuchHook = errors.New("jsrt: no such exported function")

// Exports returns what the module exports. The module was evaluated once in
// a fresh runtime by Compile; the returned value is an independent copy.
func (p *Program) Exports() Exports {
	return Exports{
		Meta:        cloneJSONLike(p.exports.Meta),
		Functions:   slices.Clone(p.exports.Functions),
		ExportNames: slices.Clone(p.exports.ExportNames),
	}
}

// inspect evaluates the module in a throwaway runtime and records its exports.
func (p *Program) inspect(evalTimeout time.Duration) (ex Exports, err error) {
	ctx, cancel := context.WithTimeoutCause(context.Background(), evalTimeout, errModuleTimeout)
	defer cancel()
	v, err := newVM(ctx, p, defaultEnv(nil))
	if err != nil {
		return Exports{}, &CompileError{Name: p.name, Message: strings.TrimPrefix(err.Error(), "jsrt: ")}
	}
	p.record.GetExportedNames(func(names []string) { ex.ExportNames = slices.Clone(names) })
	slices.Sort(ex.ExportNames)
	if tryErr := v.rt.Try(func() { err = v.collect(&ex) }); tryErr != nil {
		err = tryErr
	}
	if err != nil {
		return Exports{}, &CompileError{Name: p.name, Message: "reading exports: " + err.Error()}
	}
	slices.Sort(ex.Functions)
	return ex, nil
}

func (v *vm) collect(ex *Exports) error {
	for _, name := range ex.ExportNames {
		val := v.ns.Get(name)
		if _, ok := sobek.AssertFunction(val); ok {
			ex.Functions = append(ex.Functions, name)
			continue
		}
		switch name {
		case "meta":
			meta, err := exportValue(v.rt, val, resultLimits)
			if err != nil {
				return fmt.Errorf("meta: %w", err)
			}
			ex.Meta = meta
		case "native":
			ex.Functions = append(ex.Functions, memberFunctions(val, "native.")...)
		case "protocols":
			ex.Functions = append(ex.Functions, protocolFunctions(val)...)
		}
	}
	return nil
}

// memberFunctions lists the function-valued own enumerable members of val.
func memberFunctions(val sobek.Value, prefix string) []string {
	obj, ok := val.(*sobek.Object)
	if !ok {
		return nil
	}
	var out []string
	for _, k := range obj.Keys() {
		if _, isFn := sobek.AssertFunction(obj.Get(k)); isFn {
			out = append(out, prefix+k)
		}
	}
	return out
}

func protocolFunctions(val sobek.Value) []string {
	obj, ok := val.(*sobek.Object)
	if !ok {
		return nil
	}
	var out []string
	for _, k := range obj.Keys() {
		out = append(out, memberFunctions(obj.Get(k), "protocols."+k+".")...)
	}
	return out
}

// splitPath validates a dotted hook path such as "protocols.std_video.render".
func splitPath(path string) ([]string, error) {
	segments := strings.Split(path, ".")
	if len(segments) > 3 {
		return nil, fmt.Errorf("%w: %s", ErrNoSuchHook, path)
	}
	for _, s := range segments {
		if s == "" {
			return nil, fmt.Errorf("%w: %q", ErrNoSuchHook, path)
		}
	}
	return segments, nil
}

// cloneJSONLike deep-copies a value produced by exportValue.
func cloneJSONLike(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			out[k] = cloneJSONLike(item)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = cloneJSONLike(item)
		}
		return out
	default:
		return v
	}
}
