package jsrt

import (
	"fmt"
	"sync"
	"time"

	"github.com/dlclark/regexp2"
)

// Resource bounds of the sandbox. A Go function sobek runs on a plugin's
// behalf (a built-in such as String.prototype.repeat or JSON.parse) cannot
// be interrupted, and neither can one allocation: so what a single built-in
// call may build is capped before it runs (limitsScript, guardJSONParse),
// and the slower growth of a loop is caught between instructions by the
// memory watchdog (memwatch.go).
const (
	// maxStringChars caps a string a built-in produces or works on.
	maxStringChars = 1 << 24
	// maxArrayElements caps the length of an array a built-in works on.
	maxArrayElements = 1 << 22
	// maxCallArguments caps the spread arguments of apply/construct.
	maxCallArguments = 1 << 16
	// flatStep is how many levels Array.prototype.flat flattens per native
	// call; deeper requests are done in steps so Go recursion stays short.
	flatStep = 64
	// maxJSONNesting caps the nesting JSON.parse and JSON.stringify accept:
	// both recurse on the Go stack once per level.
	maxJSONNesting = 512
	// regexpMatchTimeout bounds one regular-expression match. Sobek runs
	// patterns with backreferences or lookaround on regexp2, a backtracking
	// engine whose matches an interrupt cannot stop. A match that runs out is
	// abandoned as no match; by then the hook's own deadline has usually
	// passed, and it ends the call at the next instruction.
	regexpMatchTimeout = time.Second
)

// boundRegexpMatches sets regexp2's match timeout before the first runtime
// exists. Sobek compiles patterns with regexp2's default and offers no
// per-pattern or per-runtime option, so the bound has to be the package
// default; it is set here, on the path that builds a runtime, rather than at
// import, so that importing jsrt changes nothing and only a process that runs
// plugins gets the bound. Sobek is regexp2's only user in this binary.
func boundRegexpMatches() {
	regexpBoundOnce.Do(func() { regexp2.DefaultMatchTimeout = regexpMatchTimeout })
}

var regexpBoundOnce sync.Once

// limitsScript wraps the built-ins that can allocate without bound, or
// recurse natively without bound, in one call. The originals stay reachable
// only through these closures. Proxy is removed: a chain of proxies
// recurses in Go once per link, and plugins have no use for it; so are the
// binary buffer types, whose constructors allocate any size at once.
var limitsScript = fmt.Sprintf(`(function () {
  "use strict";
  const MAX_STR = %d, MAX_ELEMS = %d, MAX_ARGS = %d, FLAT_STEP = %d, MAX_DEPTH = %d;
  const apply = Reflect.apply, construct = Reflect.construct, ownKeys = Reflect.ownKeys;
  const isArray = Array.isArray, trunc = Math.trunc, toNumber = Number, toStr = String;
  const tooBig = function (what) { return new RangeError(what + " exceeds the plugin sandbox limit"); };
  const define = function (obj, key, fn) {
    Object.defineProperty(obj, key, { value: fn, writable: true, enumerable: false, configurable: true });
  };
  const lengthOf = function (v) {
    if (v === null || v === undefined) return 0;
    const n = toNumber(v.length);
    return n > 0 ? n : 0;
  };

  for (const name of ["Proxy", "ArrayBuffer", "SharedArrayBuffer", "DataView", "Atomics",
    "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array",
    "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"]) {
    delete globalThis[name];
  }

  const AP = Array.prototype;
  const origJoin = AP.join, origFlat = AP.flat;
  for (const key of ownKeys(AP)) {
    const orig = AP[key];
    if (key === "constructor" || typeof orig !== "function") continue;
    define(AP, key, function () {
      if (lengthOf(this) > MAX_ELEMS) throw tooBig("array length");
      return apply(orig, this, arguments);
    });
  }
  const joinedLength = function (arr, sep) {
    let n = sep.length * lengthOf(arr);
    for (let i = 0; i < arr.length && n <= MAX_STR; i++) {
      const v = arr[i];
      if (typeof v === "string") n += v.length;
    }
    return n;
  };
  define(AP, "join", function (sep) {
    if (lengthOf(this) > MAX_ELEMS) throw tooBig("array length");
    const s = sep === undefined ? "," : toStr(sep);
    if (joinedLength(this, s) > MAX_STR) throw tooBig("joined string");
    return apply(origJoin, this, arguments);
  });
  define(AP, "flat", function (depth) {
    if (lengthOf(this) > MAX_ELEMS) throw tooBig("array length");
    let left = depth === undefined ? 1 : trunc(toNumber(depth));
    if (!(left > FLAT_STEP)) return apply(origFlat, this, [left]);
    let out = apply(origFlat, this, [FLAT_STEP]);
    for (left -= FLAT_STEP; left > 0 && apply(AP.some, out, [isArray]); left -= FLAT_STEP) {
      out = apply(origFlat, out, [left > FLAT_STEP ? FLAT_STEP : left]);
    }
    return out;
  });
  const origConcat = AP.concat;
  define(AP, "concat", function () {
    let n = lengthOf(this);
    for (let i = 0; i < arguments.length; i++) n += isArray(arguments[i]) ? lengthOf(arguments[i]) : 1;
    if (n > MAX_ELEMS) throw tooBig("array length");
    return apply(origConcat, this, arguments);
  });
  for (const key of ["from", "of"]) {
    const orig = Array[key];
    define(Array, key, function (items) {
      if ((key === "of" ? arguments.length : lengthOf(items)) > MAX_ELEMS) throw tooBig("array length");
      return apply(orig, this, arguments);
    });
  }

  const SP = String.prototype;
  for (const key of ownKeys(SP)) {
    const orig = SP[key];
    // toString and valueOf are how toStr reads a String object: wrapping
    // them would recurse.
    if (key === "constructor" || key === "toString" || key === "valueOf" || typeof orig !== "function") continue;
    define(SP, key, function () {
      if (this !== null && this !== undefined && toStr(this).length > MAX_STR) throw tooBig("string length");
      return apply(orig, this, arguments);
    });
  }
  const resultGuard = function (key, size) {
    const orig = SP[key];
    define(SP, key, function () {
      const self = toStr(this);
      if (size(self, arguments) > MAX_STR) throw tooBig("string length");
      return apply(orig, this, arguments);
    });
  };
  resultGuard("repeat", function (s, a) { return s.length * toNumber(a[0]); });
  resultGuard("padStart", function (s, a) { return toNumber(a[0]); });
  resultGuard("padEnd", function (s, a) { return toNumber(a[0]); });
  resultGuard("concat", function (s, a) {
    let n = s.length;
    for (let i = 0; i < a.length; i++) n += toStr(a[i]).length;
    return n;
  });
  // The estimate is an upper bound (every position matched), far above
  // what ordinary escaping produces, so it is held to a looser cap.
  const replacedLength = function (s, a) {
    return typeof a[1] === "function" ? s.length : (s.length + (s.length + 1) * toStr(a[1]).length) / 4;
  };
  resultGuard("replace", replacedLength);
  resultGuard("replaceAll", replacedLength);

  // JSON.stringify recurses natively once per level, and its cycle check
  // makes deep input quadratic; the walk first is plain JavaScript, which
  // the deadline and the watchdog can stop.
  const origStringify = JSON.stringify, keysOf = Object.keys;
  const checkTree = function (root) {
    const seen = new Set(), stack = [[root, 0]];
    while (stack.length > 0) {
      const [v, depth] = stack.pop();
      if (v === null || typeof v !== "object" || seen.has(v)) continue;
      if (depth >= MAX_DEPTH) throw tooBig("nesting");
      seen.add(v);
      if (isArray(v)) {
        if (lengthOf(v) > MAX_ELEMS) throw tooBig("array length");
        for (let i = 0; i < v.length; i++) stack.push([v[i], depth + 1]);
      } else {
        const ks = keysOf(v);
        for (let i = 0; i < ks.length; i++) stack.push([v[ks[i]], depth + 1]);
      }
    }
  };
  define(JSON, "stringify", function (value) {
    checkTree(value);
    return apply(origStringify, JSON, arguments);
  });

  const checkArgs = function (args) {
    if (lengthOf(args) > MAX_ARGS) throw tooBig("argument list");
  };
  const FP = Function.prototype, origApply = FP.apply;
  define(FP, "apply", function (thisArg, args) {
    checkArgs(args);
    return apply(origApply, this, arguments);
  });
  define(Reflect, "apply", function (fn, thisArg, args) {
    checkArgs(args);
    return apply(fn, thisArg, args);
  });
  define(Reflect, "construct", function (fn, args) {
    checkArgs(args);
    return apply(construct, undefined, arguments);
  });
})();`, maxStringChars, maxArrayElements, maxCallArguments, flatStep, maxJSONNesting)
