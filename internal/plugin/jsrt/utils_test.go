package jsrt

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

const utilsSource = `
export function hmac(m, k, enc) { return utils.hmacSHA256(m, k, enc); }
export function jwt(c, s, h) { return utils.jwtSignHS256(c, s, h); }
export function jwtNow(secret) { const now = utils.unixNow(); return utils.jwtSignHS256({ iss: "ak", exp: now + 1800, nbf: now - 5 }, secret); }
export function b64(s) { return [utils.base64(s), utils.base64URL(s)]; }
export function b64d(s) { return utils.base64URLDecode(s); }
export function ids() { return [utils.uuid(), utils.uuid()]; }
export function now() { return utils.unixNow(); }
export function caps() { return ["json-clone@1", "submit-sse-delta@1", "json-clone@2", "x"].map(utils.hasCapability); }
export function volc(req) { return utils.volcSignV4(req); }
export function bigInput(n) { return utils.base64("x".repeat(n)); }
export function utilsFrozen() { try { utils.extra = 1; } catch (e) { return e.name; } return "writable"; }
export function log() { console.log("hello", { a: 1 }); console.warn("careful"); return true; }
export function nested(n) { let v = 1; for (let i = 0; i < n; i++) v = [v]; return utils.json.clone(v) !== undefined; }
export function cloneCycle() { const o = { a: {} }; o.a.back = o; return utils.json.clone(o); }
export function cloneShared() { const s = { x: 1 }; return utils.json.clone({ a: s, b: s }); }
export function cloneSparse() { return utils.json.clone([1, , 2]); }
export function cloneHoles() { return utils.json.clone(new Array(3)); }
export function cloneString(n) { return utils.json.clone("x".repeat(n)).length; }
export function cloneNodes(n) { return utils.json.clone(new Array(n).fill(0)).length; }
export function cloneUndefinedMember() { return utils.json.clone({ a: undefined }); }
export function cloneUndefined() { return utils.json.clone(undefined); }
export function cloneNothing() { return utils.json.clone(); }
export function cloneFunction() { return utils.json.clone({ f() {} }); }
export function cloneSymbol() { return utils.json.clone([Symbol("s")]); }
export function cloneNaN() { return utils.json.clone({ n: NaN }); }
export function cloneDate() { return utils.json.clone(new Date(0)); }
export function cloneIndependent(x) {
  const c = utils.json.clone(x);
  c.a.push(2);
  c.o.k = "changed";
  return { input: x, copy: c, frozen: Object.isFrozen(c) || Object.isFrozen(c.a), array: Array.isArray(c.a),
    plain: Object.getPrototypeOf(c) === Object.prototype };
}
export function cloneProto() { const c = utils.json.clone(JSON.parse('{"__proto__": {"polluted": true}}')); return [({}).polluted === undefined, Object.keys(c)]; }
`

func newUtilsPool(t *testing.T) *Pool {
	t.Helper()
	prog, err := Compile("utils.js", utilsSource)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	p := NewPool(prog, PoolOptions{Size: 1})
	p.env.now = func() time.Time { return time.Unix(1700000000, 0) }
	t.Cleanup(p.Close)
	return p
}

func TestUtilsReturnKnownVectors(t *testing.T) {
	p := newUtilsPool(t)
	cases := []struct {
		name string
		path string
		args []any
		want any
	}{
		// RFC 4231 test case 2; published plugins pass (message, secret).
		{"hmac hex RFC 4231", "hmac", []any{"what do ya want for nothing?", "Jefe"},
			"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
		{"hmac base64", "hmac", []any{"what do ya want for nothing?", "Jefe", "base64"},
			"W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM="},
		{"hmac base64url", "hmac", []any{"what do ya want for nothing?", "Jefe", "base64url"},
			"W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM"},
		{"base64 of UTF-8", "b64", []any{"héllo?>"}, []any{"aMOpbGxvPz4=", "aMOpbGxvPz4"}},
		{"base64URL decode raw", "b64d", []any{"aMOpbGxvPz4"}, "héllo?>"},
		{"base64URL decode padded", "b64d", []any{"aGk="}, "hi"},
		{"unixNow uses the host clock", "now", nil, int64(1700000000)},
		{"capabilities", "caps", nil, []any{true, true, false, false}},
		{"utils is frozen", "utilsFrozen", nil, "TypeError"},
		{"console is harmless", "log", nil, true},
		{"volcengine signature", "volc", []any{map[string]any{
			"Method": "POST", "URL": "https://visual.volcengineapi.com/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31&note=a%20b",
			"Headers": map[string]any{"Content-Type": "application/json"}, "Body": `{"req_key":"jimeng"}`,
			"AccessKey": "AKTEST", "SecretKey": "SKTEST", "Region": "cn-north-1", "Service": "cv", "Timestamp": 1700000000,
		}}, map[string]any{
			// Computed independently (Python hmac/hashlib) for this request.
			"Authorization":    "HMAC-SHA256 Credential=AKTEST/20231114/cn-north-1/cv/request, SignedHeaders=content-type;host;x-content-sha256;x-date, Signature=99a93cfc5a1be1c4ae60a86a18392b63b910dfbd133d6f54d076aab6cf99c07b",
			"X-Date":           "20231114T221320Z",
			"X-Content-Sha256": "ac1e5f7c04bca375341fd55c8dbec29386651167b88e031482d0380c3bab010f",
		}},
		{"volcengine lower camel keys and host clock", "volc", []any{map[string]any{
			"method": "POST", "url": "https://visual.volcengineapi.com/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31&note=a%20b",
			"headers": map[string]any{"content-type": "application/json"}, "body": `{"req_key":"jimeng"}`,
			"accessKey": "AKTEST", "secretKey": "SKTEST",
		}}, map[string]any{
			"Authorization":    "HMAC-SHA256 Credential=AKTEST/20231114/cn-north-1/cv/request, SignedHeaders=content-type;host;x-content-sha256;x-date, Signature=99a93cfc5a1be1c4ae60a86a18392b63b910dfbd133d6f54d076aab6cf99c07b",
			"X-Date":           "20231114T221320Z",
			"X-Content-Sha256": "ac1e5f7c04bca375341fd55c8dbec29386651167b88e031482d0380c3bab010f",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := p.Call(context.Background(), tc.path, tc.args...)
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestUtilsJWTVerifiesWithGoHMAC(t *testing.T) {
	p := newUtilsPool(t)
	cases := []struct {
		name       string
		path       string
		args       []any
		wantHeader map[string]any
		wantClaims map[string]any
	}{
		{"published kling-style call", "jwtNow", []any{"sk"},
			map[string]any{"alg": "HS256", "typ": "JWT"},
			map[string]any{"iss": "ak", "exp": float64(1700001800), "nbf": float64(1699999995)}},
		{"extra header fields", "jwt", []any{map[string]any{"sub": "x"}, "sk", map[string]any{"kid": "k1"}},
			map[string]any{"alg": "HS256", "typ": "JWT", "kid": "k1"},
			map[string]any{"sub": "x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := p.Call(context.Background(), tc.path, tc.args...)
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			parts := strings.Split(got.(string), ".")
			if len(parts) != 3 {
				t.Fatalf("token %q is not compact JWS", got)
			}
			mac := hmac.New(sha256.New, []byte("sk"))
			mac.Write([]byte(parts[0] + "." + parts[1]))
			if want := base64.RawURLEncoding.EncodeToString(mac.Sum(nil)); parts[2] != want {
				t.Fatalf("signature %q, want %q", parts[2], want)
			}
			assertJSONPart(t, parts[0], tc.wantHeader)
			assertJSONPart(t, parts[1], tc.wantClaims)
		})
	}
}

func TestUtilsJWTHeaderMatchesGoLibraries(t *testing.T) {
	token, err := signJWTHS256(map[string]any{"a": int64(1)}, "s", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."; !strings.HasPrefix(token, want) {
		t.Fatalf("token %q, want header %q", token, want)
	}
}

func assertJSONPart(t *testing.T, part string, want map[string]any) {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		t.Fatalf("decode %q: %v", part, err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("unmarshal %s: %v", raw, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestUtilsUUIDIsRandomVersion4(t *testing.T) {
	p := newUtilsPool(t)
	p.env.uuid = newUUIDv4
	got, err := p.Call(context.Background(), "ids")
	if err != nil {
		t.Fatal(err)
	}
	ids := got.([]any)
	v4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for _, id := range ids {
		if !v4.MatchString(id.(string)) {
			t.Errorf("%q is not a v4 UUID", id)
		}
	}
	if ids[0] == ids[1] {
		t.Error("two calls returned the same UUID")
	}
}

func TestUtilsRejectBadInput(t *testing.T) {
	p := newUtilsPool(t)
	cases := []struct {
		name    string
		path    string
		args    []any
		wantMsg string
	}{
		{"hmac needs a secret", "hmac", []any{"m"}, "utils.hmacSHA256: argument 2 must be a string"},
		{"hmac unknown encoding", "hmac", []any{"m", "k", "base32"}, "unknown encoding"},
		{"jwt empty secret", "jwt", []any{map[string]any{}, ""}, "secret must not be empty"},
		{"jwt claims must be an object", "jwt", []any{"claims", "s"}, "must be an object"},
		{"jwt alg is fixed", "jwt", []any{map[string]any{}, "s", map[string]any{"alg": "none"}}, "alg is fixed"},
		{"invalid base64url", "b64d", []any{"!!"}, "invalid base64url"},
		{"oversized utility input", "bigInput", []any{maxUtilInputBytes + 1}, "exceeds"},
		{"volc needs a URL", "volc", []any{map[string]any{}}, "absolute URL"},
		{"volc needs keys", "volc", []any{map[string]any{"url": "https://h/"}}, "accessKey and secretKey"},
		{"volc body must be text", "volc", []any{map[string]any{"url": "https://h/", "body": map[string]any{}}}, "body must be a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Call(context.Background(), tc.path, tc.args...)
			var he *HookError
			if !errors.As(err, &he) || he.Name != "TypeError" || !strings.Contains(he.Message, tc.wantMsg) {
				t.Fatalf("error = %v, want TypeError containing %q", err, tc.wantMsg)
			}
		})
	}
}

func TestJSONCloneLimits(t *testing.T) {
	p := newUtilsPool(t)
	cases := []struct {
		name    string
		path    string
		args    []any
		want    any
		wantMsg string // empty: the call must succeed with want
	}{
		{"depth 32 accepted", "nested", []any{32}, true, ""},
		{"depth 33 rejected", "nested", []any{33}, nil, "nested deeper than 32"},
		{"cycle rejected", "cloneCycle", nil, nil, "$.a.back: value contains a cycle"},
		{"shared references copied", "cloneShared", nil, map[string]any{"a": map[string]any{"x": int64(1)}, "b": map[string]any{"x": int64(1)}}, ""},
		{"sparse array rejected", "cloneSparse", nil, nil, "sparse arrays"},
		{"array of holes rejected", "cloneHoles", nil, nil, "sparse arrays"},
		{"small string accepted", "cloneString", []any{1000}, int64(1000), ""},
		{"1 MiB encoded rejected", "cloneString", []any{1 << 20}, nil, "larger than 1048576 bytes"},
		{"32768 nodes accepted", "cloneNodes", []any{32767}, int64(32767), ""},
		{"more nodes rejected", "cloneNodes", []any{32768}, nil, "more than 32768"},
		{"undefined member rejected", "cloneUndefinedMember", nil, nil, "$.a: undefined is not a JSON value"},
		{"undefined rejected", "cloneUndefined", nil, nil, "undefined is not a JSON value"},
		{"missing argument rejected", "cloneNothing", nil, nil, "a JSON value is required"},
		{"function rejected", "cloneFunction", nil, nil, "$.f: functions are not JSON values"},
		{"symbol rejected", "cloneSymbol", nil, nil, "symbols are not JSON values"},
		{"NaN rejected", "cloneNaN", nil, nil, "not a JSON number"},
		{"Date rejected", "cloneDate", nil, nil, "Date objects are not JSON values"},
		{"__proto__ stays a member", "cloneProto", nil, []any{true, []any{"__proto__"}}, ""},
		{"copy is independent and mutable", "cloneIndependent", []any{map[string]any{"a": []any{int64(1)}, "o": map[string]any{"k": "v"}}},
			map[string]any{
				"input":  map[string]any{"a": []any{int64(1)}, "o": map[string]any{"k": "v"}},
				"copy":   map[string]any{"a": []any{int64(1), int64(2)}, "o": map[string]any{"k": "changed"}},
				"frozen": false, "array": true, "plain": true,
			}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := p.Call(context.Background(), tc.path, tc.args...)
			if tc.wantMsg == "" {
				if err != nil {
					t.Fatalf("Call: %v", err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %#v, want %#v", got, tc.want)
				}
				return
			}
			var he *HookError
			if !errors.As(err, &he) || he.Name != "TypeError" || !strings.Contains(he.Message, tc.wantMsg) {
				t.Fatalf("error = %v, want TypeError containing %q", err, tc.wantMsg)
			}
		})
	}
}

func TestSupportedCapabilitiesIsACopy(t *testing.T) {
	caps := SupportedCapabilities()
	want := []string{"json-clone@1", "submit-sse-delta@1"}
	if !slices.Equal(caps, want) {
		t.Fatalf("SupportedCapabilities = %v, want %v", caps, want)
	}
	caps[0] = "changed"
	if SupportedCapabilities()[0] != "json-clone@1" {
		t.Fatal("caller could change the host's capability list")
	}
}
