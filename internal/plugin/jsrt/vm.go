package jsrt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/grafana/sobek"
	"github.com/grafana/sobek/parser"
)

// maxCallStackSize bounds JavaScript recursion. Built-ins that call back into
// JavaScript (Array.prototype.map and friends) recurse on the Go stack too, so
// the bound also keeps a runaway plugin far from a fatal Go stack overflow.
const maxCallStackSize = 4096

// defaultModuleTimeout bounds one evaluation of the module's top level.
const defaultModuleTimeout = 5 * time.Second

// errModuleTimeout is the cause reported when a module's top level runs past
// its deadline at compile time.
var errModuleTimeout = errors.New("module evaluation deadline exceeded")

// errModuleInterrupted interrupts a module evaluation whose context ended.
var errModuleInterrupted = errors.New("module evaluation interrupted")

// vm is one sobek runtime with the plugin module evaluated in it. It is used
// by one goroutine at a time and discarded after any interrupt or panic.
type vm struct {
	rt      *sobek.Runtime
	ns      *sobek.Object
	freeze  sobek.Callable
	console *consoleSink
}

// lockdownScript removes every way to compile code from a string at run
// time. eval'd code would bypass Compile's checks (imports, nesting depth)
// and a deeply nested eval source could overflow the Go stack and kill the
// process. The original constructors stay unreachable because the only paths
// to them (globals and prototype .constructor links) are replaced.
const lockdownScript = `(function () {
  "use strict";
  const deny = function () { throw new EvalError("code generation from strings is not allowed in task plugins"); };
  deny.prototype = Function.prototype;
  const lock = function (obj, name) {
    Object.defineProperty(obj, name, { value: deny, writable: false, enumerable: false, configurable: false });
  };
  lock(Function.prototype, "constructor");
  lock(Object.getPrototypeOf(function* () {}), "constructor");
  lock(globalThis, "eval");
  lock(globalThis, "Function");
})();`

// newVM builds a runtime, installs the host globals and evaluates the module;
// the evaluation is interrupted when ctx ends.
func newVM(ctx context.Context, prog *Program, env *hostEnv) (v *vm, err error) {
	boundRegexpMatches()
	rt := sobek.New()
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("jsrt: creating runtime for %s: %v", prog.name, r)
		}
	}()
	rt.SetMaxCallStackSize(maxCallStackSize)
	// Code compiled at run time must not load source maps from disk either.
	rt.SetParserOptions(parser.WithDisableSourceMaps)
	rt.SetImportModuleDynamically(func(referrer any, specifier sobek.Value, pcap any) {
		rt.FinishLoadingImportModule(referrer, specifier, pcap, nil, rt.NewTypeError(errImportRefused.Error()))
	})
	v = &vm{rt: rt, console: newConsoleSink(env.logger, prog.name)}
	if err := v.setup(env); err != nil {
		return nil, err
	}
	if err := v.evaluate(ctx, prog); err != nil {
		return nil, err
	}
	return v, nil
}

func (v *vm) setup(env *hostEnv) error {
	freeze, ok := sobek.AssertFunction(v.rt.GlobalObject().Get("Object").ToObject(v.rt).Get("freeze"))
	if !ok {
		return errors.New("jsrt: Object.freeze is missing")
	}
	v.freeze = freeze
	if err := installUtils(v.rt, env); err != nil {
		return err
	}
	if err := v.console.install(v.rt); err != nil {
		return err
	}
	if err := guardJSONParse(v.rt); err != nil {
		return err
	}
	if _, err := v.rt.RunString(limitsScript); err != nil {
		return fmt.Errorf("jsrt: installing the sandbox limits: %w", err)
	}
	if _, err := v.rt.RunString(lockdownScript); err != nil {
		return fmt.Errorf("jsrt: locking down runtime: %w", err)
	}
	return nil
}

// evaluate runs the module's top level once, interrupted when ctx ends.
func (v *vm) evaluate(ctx context.Context, prog *Program) error {
	stop := context.AfterFunc(ctx, func() { v.rt.Interrupt(errModuleInterrupted) })
	stopWatch := watchMemory(v.rt, memoryBudget)
	promise := prog.record.Evaluate(v.rt)
	if stopWatch() {
		stop()
		return fmt.Errorf("jsrt: evaluating module %s: %w", prog.name, errMemoryBudget)
	}
	if !stop() {
		return fmt.Errorf("jsrt: evaluating module %s: %w", prog.name, context.Cause(ctx))
	}
	switch promise.State() {
	case sobek.PromiseStateRejected:
		return fmt.Errorf("jsrt: evaluating module %s: %s", prog.name, describeThrown(v.rt, promise.Result()))
	case sobek.PromiseStatePending:
		return fmt.Errorf("jsrt: evaluating module %s: top level did not complete synchronously", prog.name)
	}
	v.ns = v.rt.NamespaceObjectFor(prog.record)
	return nil
}

// lookup resolves a dotted export path ("native.decodeSubmit") to a function.
func (v *vm) lookup(path string) (sobek.Callable, error) {
	segments, err := splitPath(path)
	if err != nil {
		return nil, err
	}
	var cur sobek.Value = v.ns
	for _, seg := range segments {
		obj, ok := cur.(*sobek.Object)
		if !ok {
			return nil, fmt.Errorf("%w: %s", ErrNoSuchHook, path)
		}
		cur = obj.Get(seg)
	}
	fn, ok := sobek.AssertFunction(cur)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoSuchHook, path)
	}
	return fn, nil
}

// describeThrown renders a thrown value as "Name: message" for module
// evaluation errors.
func describeThrown(rt *sobek.Runtime, val sobek.Value) string {
	name, msg := thrown(rt, val)
	if name != "" && name != "Error" {
		return name + ": " + msg
	}
	return msg
}

// thrown extracts the error name and message of a thrown value: the name and
// message of an Error object, otherwise the value's string form. Reading them
// may run plugin getters, so a failure falls back to a generic text.
func thrown(rt *sobek.Runtime, val sobek.Value) (name, msg string) {
	defer func() {
		if recover() != nil {
			name, msg = "", "exception (unprintable value)"
		}
	}()
	if val == nil {
		return "", "exception (no value)"
	}
	switch x := val.Export().(type) {
	case *sobek.Exception:
		return thrown(rt, x.Value())
	case *sobek.InterruptedError:
		return "", fmt.Sprint(x.Value())
	case error:
		return "", x.Error()
	}
	if ex := rt.Try(func() { name, msg = errorFields(val) }); ex != nil {
		return "", "exception (unprintable value)"
	}
	return name, msg
}

func errorFields(val sobek.Value) (name, msg string) {
	if obj, ok := val.(*sobek.Object); ok {
		if m := obj.Get("message"); m != nil && !sobek.IsUndefined(m) {
			if n := obj.Get("name"); n != nil && !sobek.IsUndefined(n) {
				name = n.String()
			}
			return name, m.String()
		}
	}
	return "", val.String()
}

// hostEnv carries what host utilities and the console need.
type hostEnv struct {
	logger *slog.Logger
	now    func() time.Time
	uuid   func() string
}

func defaultEnv(logger *slog.Logger) *hostEnv {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &hostEnv{logger: logger, now: time.Now, uuid: newUUIDv4}
}
