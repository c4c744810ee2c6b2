package jsrt

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// Each case would have run for ever, allocated terabytes at once or
// overflowed the Go stack before the sandbox limits: that the test process
// is still alive to compare the answer is half of the proof.
const limitsSource = `
export function backtrack() { return /^(?=(a+)+)(a+)+\1$/.test("a".repeat(40) + "b"); }
export function backtrackForever() { for (;;) /^(?=(a+)+)(a+)+\1$/.test("a".repeat(40) + "b"); }
export function repeatHuge() { return "x".repeat(2 ** 40).length; }
export function padHuge() { return "x".padStart(2 ** 31).length; }
export function joinHuge() { return new Array(1e6).join("x".repeat(1e4)).length; }
export function fillSparse() { return new Array(2 ** 32 - 1).fill(0).length; }
export function spreadSparse() { const a = []; a.length = 2 ** 32 - 1; return [...a].length; }
export function applyHuge() { return String.fromCharCode.apply(null, new Array(2 ** 31)).length; }
export function bufferHuge() { return new ArrayBuffer(2 ** 40).byteLength; }
export function doubling() { let s = "x"; for (let i = 0; i < 40; i++) s += s; return s.length; }
export function parseDeep() { return JSON.parse("[".repeat(1e6) + "]".repeat(1e6)); }
export function stringifyDeep() { let a = []; for (let i = 0; i < 1e4; i++) a = [a]; return JSON.stringify(a).length; }
export function joinDeep() { let a = []; for (let i = 0; i < 1e5; i++) a = [a]; return String(a).length; }
export function flatDeep() { let a = [1]; for (let i = 0; i < 1e4; i++) a = [a]; return a.flat(Infinity); }
export function proxyChain() { let p = {}; for (let i = 0; i < 1e5; i++) p = new Proxy(p, {}); return p.x; }
export function ordinary() {
  const parts = ["a", "b"].map((s) => s.repeat(3)).concat(["c".padEnd(3, "-")]);
  return { joined: parts.join("|"), json: JSON.parse(JSON.stringify({ n: [1, [2, [3]]] })), flat: [1, [2, [3, [4]]]].flat(Infinity),
    match: /(\w)\1/.test("xaay"), replaced: "a-b".replaceAll("-", "+"), max: Math.max.apply(null, [1, 5, 3]) };
}
`

func TestSandboxLimitsEndRunawayHooksAndKeepTheProcess(t *testing.T) {
	prog, err := Compile("limits.js", limitsSource)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	tests := []struct {
		hook    string
		wantErr string // "" means a result is expected
		within  time.Duration
		budget  uint64        // memory budget; 64 MiB when zero
		timeout time.Duration // hook deadline; 300 ms when zero
	}{
		// A backtracking match is abandoned after a second, so the hook's
		// deadline ends the call soon after it passes.
		{"backtrack", "deadline", 2 * time.Second, 0, 0},
		{"backtrackForever", "deadline", 2 * time.Second, 0, 0},
		{"repeatHuge", "string length exceeds the plugin sandbox limit", time.Second, 0, 0},
		{"padHuge", "string length exceeds", time.Second, 0, 0},
		{"joinHuge", "joined string exceeds", time.Second, 0, 0},
		{"fillSparse", "array length exceeds", time.Second, 0, 0},
		{"spreadSparse", "array length exceeds", time.Second, 0, 0},
		{"applyHuge", "argument list exceeds", time.Second, 0, 0},
		{"bufferHuge", "ArrayBuffer is not defined", time.Second, 0, 0},
		{"doubling", "more memory than the sandbox allows", 3 * time.Second, 0, 0},
		{"parseDeep", "nested deeper than 512", time.Second, 0, 0},
		{"stringifyDeep", "nesting exceeds", 2 * time.Second, 0, 0},
		{"joinDeep", "maximum call stack size exceeded", 3 * time.Second, memoryBudget, loadedDeadline},
		{"flatDeep", "", 2 * time.Second, 0, 0},
		{"proxyChain", "Proxy is not defined", time.Second, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.hook, func(t *testing.T) {
			budget := tt.budget
			if budget == 0 {
				budget = 64 << 20
			}
			timeout := tt.timeout
			switch {
			case timeout == 0 && tt.wantErr == "deadline":
				timeout = 300 * time.Millisecond
			case timeout == 0:
				// A limit must end the hook, not the deadline: on a loaded
				// machine (or under the race detector) the deadline must
				// not come first.
				timeout = loadedDeadline
			}
			pool := NewPool(prog, PoolOptions{Size: 1, HookTimeout: timeout, MemoryBudget: budget})
			defer pool.Close()
			start := time.Now()
			res, err := pool.Call(context.Background(), tt.hook)
			if took := time.Since(start); took > slack*tt.within {
				t.Errorf("took %s, want at most %s", took, slack*tt.within)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("err = %v, want a result", err)
			case tt.wantErr == "deadline" && !errors.Is(err, ErrHookTimeout):
				t.Fatalf("err = %v, want the hook deadline", err)
			case tt.wantErr != "" && tt.wantErr != "deadline" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("res = %v, err = %v, want an error containing %q", res, err, tt.wantErr)
			}
		})
	}
}

func TestOrdinaryCodeStillWorksInsideTheLimits(t *testing.T) {
	pool := newPoolFor(t, limitsSource)
	res, err := pool.Call(context.Background(), "ordinary")
	if err != nil {
		t.Fatal(err)
	}
	m := res.(map[string]any)
	if m["joined"] != "aaa|bbb|c--" || m["match"] != true || m["replaced"] != "a+b" || m["max"] != int64(5) {
		t.Fatalf("ordinary code changed behaviour: %v", m)
	}
	if flat := m["flat"].([]any); len(flat) != 4 {
		t.Fatalf("flat(Infinity) = %v", flat)
	}
}

// A module whose top level allocates without bound is refused at compile
// time (upload and dry-run) instead of killing the process.
func TestModuleTopLevelAllocationsAreRefusedAtCompile(t *testing.T) {
	tests := []struct {
		name, source, want string
	}{
		{"a huge repeat", `const s = "x".repeat(2 ** 40); export function f() { return s.length; }`, "string length exceeds"},
		{"a deep parse", `const v = JSON.parse("[".repeat(1e6)); export function f() { return v; }`, "nested deeper"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile("top.js", tt.source)
			var ce *CompileError
			if !errors.As(err, &ce) || !strings.Contains(ce.Message, tt.want) {
				t.Fatalf("err = %v, want a CompileError containing %q", err, tt.want)
			}
		})
	}
}

func newPoolFor(t *testing.T, source string) *Pool {
	t.Helper()
	prog, err := Compile("limits.js", source)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	pool := NewPool(prog, PoolOptions{Size: 1, HookTimeout: loadedDeadline})
	t.Cleanup(pool.Close)
	return pool
}

// The bounds below prove a runaway hook ends; they are not speed targets.
// slack and loadedDeadline keep them true on a busy two-core CI machine
// running the race detector, where the same work takes several times as
// long.
const (
	slack          = 4
	loadedDeadline = 30 * time.Second
)

func TestJSONNestingIgnoresBracketsInStrings(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{`{}`, 1},
		{`[[1],{"a":[2]}]`, 3},
		{`"[[[["`, 0},
		{`["\"[[[", [1]]`, 2},
		{`[` + strings.Repeat(`{"k":[`, 10), 21},
	}
	for _, tt := range tests {
		if got := jsonNesting(tt.text); got != tt.want {
			t.Errorf("jsonNesting(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}

func TestEscapingALargeTextStaysWithinTheReplaceBound(t *testing.T) {
	// 1.3 M chars whose every-position estimate (21 M) passes the string cap.
	pool := newPoolFor(t, `export function esc(n) { return "<a&b>".repeat(n).replace(/&/g, "&amp;&amp;&amp;").replace(/</g, "&lt;").length; }`)
	res, err := pool.Call(context.Background(), "esc", 1<<18)
	if err != nil || res != int64(22<<18) {
		t.Fatalf("esc = %v, %v", res, err)
	}
}
