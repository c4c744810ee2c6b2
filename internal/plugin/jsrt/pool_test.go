package jsrt

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const hooksSource = `
export const meta = { apiVersion: 1, key: "demo", models: ["m1", "m2"], sortPriority: 3, ratio: 0.5, flag: true, nothing: null };
let calls = 0;
export function buildSubmitRequest(ctx) {
  calls++;
  return { url: ctx.baseUrl + "/submit", method: "POST", body: { prompt: ctx.requestBody.prompt, n: ctx.requestBody.n * 2 } };
}
export function echo(...args) { return args; }
export function count() { return calls; }
export function fail(msg) { throw new TypeError(msg); }
export function failString() { throw "plain string"; }
export function failLong() { throw new Error("x".repeat(5000)); }
export function spin() { while (true) {} }
export function mutate(ctx) { ctx.requestBody.prompt = "changed"; return ctx.requestBody.prompt; }
export function mutateDeep(ctx) { ctx.list.push(1); return ctx.list.length; }
export function cloneAndMutate(ctx) { const c = utils.json.clone(ctx); c.requestBody.prompt = "mine"; c.extra = [1]; return c; }
export function returnsFunction() { return { f: function () {} }; }
export function returnsSymbol() { return [Symbol("s")]; }
export function returnsCycle() { const o = {}; o.self = o; return o; }
export function returnsUndefined() { return undefined; }
export function returnsShape() { return { u: undefined, n: NaN, i: 3, f: 1.5, big: 2 ** 60, neg: -0, d: new Date(0), arr: [undefined, 1], proto: JSON.parse('{"__proto__": {"x": 1}}') }; }
export function returnsPromise() { return Promise.resolve(1); }
export function recurse() { return recurse(); }
export function tryEval() { return eval("1 + 1"); }
export function tryFunctionCtor() { return (function () {}).constructor("return 1")(); }
export function tryGeneratorCtor() { return Object.getPrototypeOf(function* () {}).constructor("yield 1"); }
export function tryRequire() { return typeof require + typeof setTimeout + typeof fetch; }
export function now() { return typeof Date.now() === "number"; }
export function slowHalfSecond() { const end = Date.now() + 500; while (Date.now() < end) {} return "done"; }
export const native = {
  decodeSubmit(ctx) { return { kind: "submit", model: ctx.body.value.model }; },
  error(ctx, err) { return { code: err.code }; },
  notAFunction: 5,
};
export const protocols = {
  std_video: { decodeRequest: function (ctx) { return { kind: "submit", model: ctx.model }; }, render: (ctx, task) => ({ id: task.task_id }) },
  openai_responses: { renderEvents() { return { events: [], state: null, done: true }; } },
};
`

func newTestPool(t testing.TB, opts PoolOptions) *Pool {
	t.Helper()
	prog, err := Compile("hooks.js", hooksSource)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	p := NewPool(prog, opts)
	t.Cleanup(p.Close)
	return p
}

func TestProgramExportsDiscoversNestedFunctions(t *testing.T) {
	prog, err := Compile("hooks.js", hooksSource)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	ex := prog.Exports()
	for _, want := range []string{"buildSubmitRequest", "native.decodeSubmit", "native.error",
		"protocols.std_video.decodeRequest", "protocols.std_video.render", "protocols.openai_responses.renderEvents"} {
		if !contains(ex.Functions, want) {
			t.Errorf("Functions %v lacks %q", ex.Functions, want)
		}
	}
	if contains(ex.Functions, "native.notAFunction") || contains(ex.Functions, "meta") {
		t.Errorf("Functions %v lists non-functions", ex.Functions)
	}
	for _, want := range []string{"meta", "native", "protocols", "echo"} {
		if !contains(ex.ExportNames, want) {
			t.Errorf("ExportNames %v lacks %q", ex.ExportNames, want)
		}
	}
	wantMeta := map[string]any{"apiVersion": int64(1), "key": "demo", "models": []any{"m1", "m2"},
		"sortPriority": int64(3), "ratio": 0.5, "flag": true, "nothing": nil}
	if !reflect.DeepEqual(ex.Meta, wantMeta) {
		t.Errorf("Meta = %#v, want %#v", ex.Meta, wantMeta)
	}
	ex.Meta.(map[string]any)["key"] = "changed"
	if prog.Exports().Meta.(map[string]any)["key"] != "demo" {
		t.Error("Exports returned shared Meta; mutation leaked into the program")
	}
}

func TestProgramExportsReportsForbiddenExportNames(t *testing.T) {
	prog, err := Compile("old.js", `export const meta = {}; export const renderers = {}; export function resolveRequest() {} export const endpoints = [];`)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	got := prog.Exports().ExportNames
	want := []string{"endpoints", "meta", "renderers", "resolveRequest"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ExportNames = %v, want %v", got, want)
	}
}

func TestPoolCallConvertsValues(t *testing.T) {
	p := newTestPool(t, PoolOptions{})
	type headerish struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
	}
	cases := []struct {
		name string
		path string
		args []any
		want any
	}{
		{"hook with nested input", "buildSubmitRequest",
			[]any{map[string]any{"baseUrl": "https://x", "requestBody": map[string]any{"prompt": "hi", "n": 2}}},
			map[string]any{"url": "https://x/submit", "method": "POST", "body": map[string]any{"prompt": "hi", "n": int64(4)}}},
		{"raw JSON and structs", "echo",
			[]any{json.RawMessage(`{"a":[1,2.5,"s",null,true]}`), headerish{Name: "n", Count: 2}, map[string][]string{"X": {"1"}}},
			[]any{map[string]any{"a": []any{int64(1), 2.5, "s", nil, true}}, map[string]any{"name": "n", "count": int64(2)}, map[string]any{"X": []any{"1"}}}},
		{"undefined result is nil", "returnsUndefined", nil, nil},
		{"JSON-like normalisation", "returnsShape", nil, map[string]any{
			"n": nil, "i": int64(3), "f": 1.5, "big": float64(1 << 60), "neg": int64(0),
			"d": "1970-01-01T00:00:00.000Z", "arr": []any{nil, int64(1)}, "proto": map[string]any{"__proto__": map[string]any{"x": int64(1)}}}},
		{"native member", "native.decodeSubmit", []any{map[string]any{"body": map[string]any{"value": map[string]any{"model": "m1"}}}},
			map[string]any{"kind": "submit", "model": "m1"}},
		{"protocol member", "protocols.std_video.render", []any{map[string]any{}, map[string]any{"task_id": "t1"}},
			map[string]any{"id": "t1"}},
		{"no host globals", "tryRequire", nil, "undefinedundefinedundefined"},
		{"Date.now works", "now", nil, true},
		{"json.clone gives a mutable copy", "cloneAndMutate", []any{map[string]any{"requestBody": map[string]any{"prompt": "p"}}},
			map[string]any{"requestBody": map[string]any{"prompt": "mine"}, "extra": []any{int64(1)}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := p.Call(context.Background(), tc.path, tc.args...)
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestPoolCallReportsHookErrors(t *testing.T) {
	p := newTestPool(t, PoolOptions{})
	cases := []struct {
		name     string
		path     string
		args     []any
		wantName string
		wantMsg  string
	}{
		{"thrown TypeError", "fail", []any{"bad input"}, "TypeError", "bad input"},
		{"thrown string", "failString", nil, "", "plain string"},
		{"frozen input", "mutate", []any{map[string]any{"requestBody": map[string]any{"prompt": "p"}}}, "TypeError", ""},
		{"frozen nested array", "mutateDeep", []any{map[string]any{"list": []any{}}}, "TypeError", ""},
		{"function in result", "returnsFunction", nil, "TypeError", "$.f: functions are not JSON values"},
		{"symbol in result", "returnsSymbol", nil, "TypeError", "$[0]: symbols are not JSON values"},
		{"cycle in result", "returnsCycle", nil, "TypeError", "$.self: value contains a cycle"},
		{"promise result", "returnsPromise", nil, "TypeError", "Promise"},
		{"runaway recursion", "recurse", nil, "RangeError", "maximum call stack size exceeded"},
		{"eval is disabled", "tryEval", nil, "EvalError", "code generation from strings"},
		{"Function constructor is disabled", "tryFunctionCtor", nil, "EvalError", "code generation from strings"},
		{"GeneratorFunction constructor is disabled", "tryGeneratorCtor", nil, "EvalError", "code generation from strings"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Call(context.Background(), tc.path, tc.args...)
			var he *HookError
			if !errors.As(err, &he) {
				t.Fatalf("error = %v (%T), want *HookError", err, err)
			}
			if he.Hook != tc.path || he.Name != tc.wantName || !strings.Contains(he.Message, tc.wantMsg) {
				t.Errorf("HookError = %+v, want hook %q name %q message containing %q", he, tc.path, tc.wantName, tc.wantMsg)
			}
		})
	}
}

func TestPoolCallTruncatesLongMessages(t *testing.T) {
	p := newTestPool(t, PoolOptions{})
	_, err := p.Call(context.Background(), "failLong")
	var he *HookError
	if !errors.As(err, &he) {
		t.Fatalf("error = %v, want *HookError", err)
	}
	if len(he.Message) > maxHookMessageBytes || !strings.HasSuffix(he.Message, "…") {
		t.Fatalf("message length %d, want at most %d with an ellipsis", len(he.Message), maxHookMessageBytes)
	}
}

func TestPoolCallRejectsUnknownPaths(t *testing.T) {
	p := newTestPool(t, PoolOptions{})
	for _, path := range []string{"missing", "meta", "native.notAFunction", "native.missing.deeper", "", "a..b", "protocols.std_video.render.x"} {
		if _, err := p.Call(context.Background(), path); !errors.Is(err, ErrNoSuchHook) {
			t.Errorf("Call(%q) error = %v, want ErrNoSuchHook", path, err)
		}
	}
}

func TestPoolCallInputsAreDeepCopies(t *testing.T) {
	p := newTestPool(t, PoolOptions{})
	input := map[string]any{"requestBody": map[string]any{"prompt": "p", "list": []any{"a"}}}
	got, err := p.Call(context.Background(), "cloneAndMutate", input)
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	if input["requestBody"].(map[string]any)["prompt"] != "p" {
		t.Fatal("hook changed the caller's Go value")
	}
	got.(map[string]any)["requestBody"].(map[string]any)["prompt"] = "caller edit"
	again, err := p.Call(context.Background(), "echo", input)
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	if again.([]any)[0].(map[string]any)["requestBody"].(map[string]any)["prompt"] != "p" {
		t.Fatal("a result shared memory with the caller's input")
	}
}

func TestPoolDeadlineInterruptsAndReplacesRuntime(t *testing.T) {
	p := newTestPool(t, PoolOptions{Size: 1, HookTimeout: 200 * time.Millisecond})
	if _, err := p.Call(context.Background(), "buildSubmitRequest",
		map[string]any{"baseUrl": "b", "requestBody": map[string]any{"n": 1}}); err != nil {
		t.Fatalf("warm-up call: %v", err)
	}
	start := time.Now()
	_, err := p.Call(context.Background(), "spin")
	elapsed := time.Since(start)
	if !errors.Is(err, ErrHookTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want ErrHookTimeout and DeadlineExceeded", err)
	}
	if elapsed > time.Second {
		t.Fatalf("interrupt took %v, want about 200ms", elapsed)
	}
	// The interrupted runtime is gone: a fresh one starts with calls == 0.
	got, err := p.Call(context.Background(), "count")
	if err != nil {
		t.Fatalf("call after timeout: %v", err)
	}
	if got != int64(0) {
		t.Fatalf("count = %v, want 0 from a fresh runtime", got)
	}
}

func TestPoolContextDeadlineShorterThanHookTimeout(t *testing.T) {
	p := newTestPool(t, PoolOptions{HookTimeout: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.Call(ctx, "spin")
	if !errors.Is(err, ErrHookTimeout) || time.Since(start) > 2*time.Second {
		t.Fatalf("error = %v after %v, want a timeout near 100ms", err, time.Since(start))
	}
}

func TestPoolContextCancelInterrupts(t *testing.T) {
	p := newTestPool(t, PoolOptions{Size: 1})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := p.Call(ctx, "spin")
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrHookTimeout) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if _, err := p.Call(context.Background(), "count"); err != nil {
		t.Fatalf("pool unusable after cancel: %v", err)
	}
}

func TestPoolBoundsConcurrency(t *testing.T) {
	prog, err := Compile("c.js", `export function tick() { return utils.unixNow(); }`)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPool(prog, PoolOptions{Size: 2})
	defer p.Close()
	// The clock runs inside the hook, so it observes how many hooks run at once.
	var inFlight, peak atomic.Int32
	p.env.now = func() time.Time {
		n := inFlight.Add(1)
		for {
			old := peak.Load()
			if n <= old || peak.CompareAndSwap(old, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		inFlight.Add(-1)
		return time.Unix(0, 0)
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if _, err := p.Call(context.Background(), "tick"); err != nil {
				t.Errorf("Call: %v", err)
			}
		})
	}
	wg.Wait()
	if got := peak.Load(); got != 2 {
		t.Fatalf("peak concurrency = %d, want exactly the pool size 2", got)
	}
}

func TestPoolSlowModuleStartHitsHookDeadline(t *testing.T) {
	prog, err := Compile("slow.js", `const end = Date.now() + 300; while (Date.now() < end) {} export function f() { return 1; }`)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	p := NewPool(prog, PoolOptions{HookTimeout: 50 * time.Millisecond})
	defer p.Close()
	if _, err := p.Call(context.Background(), "f"); !errors.Is(err, ErrHookTimeout) {
		t.Fatalf("error = %v, want ErrHookTimeout while the runtime starts", err)
	}
}

func TestPoolWaitRespectsContext(t *testing.T) {
	p := newTestPool(t, PoolOptions{Size: 1})
	go func() { _, _ = p.Call(context.Background(), "slowHalfSecond") }()
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := p.Call(ctx, "count"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want DeadlineExceeded while waiting for a runtime", err)
	}
}

func TestPoolCloseRefusesCalls(t *testing.T) {
	p := newTestPool(t, PoolOptions{})
	p.Close()
	if _, err := p.Call(context.Background(), "count"); !errors.Is(err, ErrPoolClosed) {
		t.Fatalf("error = %v, want ErrPoolClosed", err)
	}
}

func TestPoolRuntimeReusedAfterHookError(t *testing.T) {
	p := newTestPool(t, PoolOptions{Size: 1})
	body := map[string]any{"baseUrl": "b", "requestBody": map[string]any{"n": 1}}
	for i := range 2 {
		if _, err := p.Call(context.Background(), "buildSubmitRequest", body); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if _, err := p.Call(context.Background(), "fail", "x"); err == nil {
		t.Fatal("want a hook error")
	}
	got, err := p.Call(context.Background(), "count")
	if err != nil || got != int64(2) {
		t.Fatalf("count = %v, %v; want 2 from the same runtime", got, err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func BenchmarkPoolCall(b *testing.B) {
	prog, err := Compile("bench.js", `export function hook(ctx) { return { url: ctx.baseUrl + "/x", n: ctx.n + 1 }; }`)
	if err != nil {
		b.Fatal(err)
	}
	p := NewPool(prog, PoolOptions{})
	defer p.Close()
	arg := map[string]any{"baseUrl": "https://example.com", "n": 1}
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.Call(ctx, "hook", arg); err != nil {
				b.Fatal(err)
			}
		}
	})
}
