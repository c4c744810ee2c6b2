// Package jsrt runs task plugins: single JavaScript ES modules (API v1) that
// teach the gateway an asynchronous vendor.
//
// The runtime rules:
//
//   - Go does all I/O. Plugin code gets no require, no timers, no network and
//     no file access; hooks are synchronous functions that turn plain JSON-like
//     values into other plain JSON-like values. The only host services are the
//     pure functions on the global utils object (see SupportedCapabilities) and
//     a size-capped console that writes to the pool's logger.
//   - Compile accepts exactly one self-contained module: imports (static or
//     dynamic), re-exports from other modules, import.meta, async functions and
//     await are rejected with a positioned error, and the source must fit in
//     MaxSourceBytes. The parser never reads files (source maps are disabled).
//   - A Pool owns a bounded set of sobek runtimes. Each runtime evaluates the
//     module once and is used by one goroutine at a time.
//   - Every call runs under a deadline (the smaller of the hook timeout and the
//     caller's context). On deadline or cancellation the runtime is interrupted
//     and discarded, never returned to the pool, because an interrupted VM may
//     hold half-updated module state. A runtime that panicked is discarded too.
//   - Resources are bounded (limits.go, memwatch.go): JavaScript recursion by
//     a call-stack size; built-ins that could allocate or recurse natively
//     without bound in one call (repeat, padStart, join, fill, apply, JSON
//     parse and stringify, flat, ...) refuse oversized work with a RangeError;
//     a backtracking regular expression gives up after one second; the heap
//     growth of one call or module evaluation is watched and the runtime
//     interrupted past its budget. Proxy and the binary buffer types are
//     absent.
//   - Inputs are deep copies built fresh for each call and deeply frozen, so a
//     hook can neither change the caller's values nor leak them into the next
//     call through its arguments. Results are converted back to plain Go values
//     (map[string]any, []any, string, int64, float64, bool, nil): integral
//     numbers within ±2^53 become int64, every other number float64.
//   - Request-scoped data must not live in module globals between calls. The
//     host cannot prove that, but it never places host data in globals itself.
package jsrt
