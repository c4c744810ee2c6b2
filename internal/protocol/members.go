package protocol

import (
	"bytes"
	"strconv"
	"strings"
	"sync"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// CheckMembers reads a request body once, before anything else reads it:
// valid is false when the body is not JSON (the caller answers in its own
// words), and dup is the 400 for the first object that names a member
// twice (CONTRACT §13).
//
// Why every object and not only those the gateway reads: the gateway's
// readers (gjson, sjson) take the first of two equal members and the
// upstream's parsers the last, so a repeated "model", "stream" or
// "max_tokens" would let the upstream serve what was never checked or
// billed. Names are compared as the parsers compare them, escapes decoded
// ("mod\u0065l" is "model"); in the top-level object also without regard
// to case, because decoders into structs (Go's encoding/json) match
// request fields that way.
//
// It is one pass with no allocation for ordinary bodies, and it replaces
// the validity check the readers made before, so it costs no extra pass
// (docs/PERFORMANCE.md).
func CheckMembers(body []byte) (valid bool, dup *ir.Error) {
	s := scanPool.Get().(*memberScan)
	valid = s.run(body)
	if valid && s.dupAt >= 0 {
		dup = DuplicateMember(s.dupPath)
	}
	s.reset()
	scanPool.Put(s)
	return valid, dup
}

// DuplicateMember is the 400 for a body that names a member twice; path is
// where (e.g. "model", "tools[0].type", "stream_options.include_usage").
func DuplicateMember(path string) *ir.Error {
	e := ir.BadRequest("duplicate_member", "the request body names the member %q more than once; send each member once", path)
	e.Param = path
	return e
}

// maxNesting is encoding/json's nesting limit, so that the two agree on
// which bodies are valid.
const maxNesting = 10000

// linearKeys is how many members an object may have before its names are
// compared through a set instead of one by one.
const linearKeys = 24

type memberScan struct {
	b      []byte
	frames []scanFrame
	keys   []keySpan
	// norm holds the decoded names of members whose names have escapes or
	// bytes outside ASCII; keySpan points into it.
	norm []byte
	// dupAt is the offset of the first repeated member (-1: none);
	// dupPath names it.
	dupAt   int
	dupPath string
}

type scanFrame struct {
	obj bool
	// first is the index in keys of this object's first member, norm
	// the length of memberScan.norm when it opened.
	first, norm int
	// index is an array's current element.
	index int
	// set holds the names of a large object (nil until linearKeys).
	set map[string]struct{}
}

type keySpan struct {
	start, end int32
	// norm: the name is in memberScan.norm, decoded; otherwise it is the
	// raw bytes between the quotes and pure ASCII without escapes.
	norm bool
}

var scanPool = sync.Pool{New: func() any {
	return &memberScan{frames: make([]scanFrame, 0, 32), keys: make([]keySpan, 0, 64), dupAt: -1}
}}

func (s *memberScan) reset() {
	if cap(s.frames) > 1024 || cap(s.keys) > 4096 || cap(s.norm) > 64<<10 {
		*s = memberScan{frames: make([]scanFrame, 0, 32), keys: make([]keySpan, 0, 64)}
	}
	s.b, s.frames, s.keys, s.norm = nil, s.frames[:0], s.keys[:0], s.norm[:0]
	s.dupAt, s.dupPath = -1, ""
}

// run scans b as one JSON value followed only by white space, without
// recursion (a hostile body may nest ten thousand deep). It keeps going
// after a duplicate is found, because validity decides the answer first
// (a body that is not JSON is refused as such).
func (s *memberScan) run(b []byte) bool {
	s.b = b
	i, ok, want := skipWS(b, 0), true, wantValue
	for ok {
		switch want {
		case wantValue:
			i, want, ok = s.value(i)
		case wantMember:
			i, ok = s.member(i)
			want = wantValue
		default:
			if len(s.frames) == 0 {
				return skipWS(b, i) == len(b)
			}
			i, want, ok = s.next(skipWS(b, i))
		}
	}
	return false
}

// What the scan expects next.
const (
	wantAfter = iota // a comma or the close of the innermost container
	wantValue
	wantMember
)

// next reads what follows a value inside a container: a comma and what
// the container holds next, or its close.
func (s *memberScan) next(i int) (int, int, bool) {
	if i >= len(s.b) {
		return i, 0, false
	}
	f := &s.frames[len(s.frames)-1]
	switch c := s.b[i]; {
	case c == ',' && f.obj:
		return skipWS(s.b, i+1), wantMember, true
	case c == ',':
		f.index++
		return skipWS(s.b, i+1), wantValue, true
	case (f.obj && c == '}') || (!f.obj && c == ']'):
		s.pop()
		return i + 1, wantAfter, true
	}
	return i, 0, false
}

// value scans the value at b[i:]. An object or array is only opened: the
// run loop walks its contents.
func (s *memberScan) value(i int) (int, int, bool) {
	b := s.b
	if i >= len(b) {
		return i, 0, false
	}
	var ok bool
	switch c := b[i]; {
	case c == '"':
		i, _, ok = scanString(b, i+1, false)
	case c == '{' || c == '[':
		if !s.push(c == '{') {
			return i, 0, false
		}
		j := skipWS(b, i+1)
		if j < len(b) && b[j] == c+2 { // '}' and ']' follow '{' and '[' by two
			s.pop()
			return j + 1, wantAfter, true
		}
		if c == '{' {
			return j, wantMember, true
		}
		return j, wantValue, true
	case c == 't':
		i, ok = literal(b, i, "true")
	case c == 'f':
		i, ok = literal(b, i, "false")
	case c == 'n':
		i, ok = literal(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		i, ok = scanNumber(b, i)
	}
	return i, wantAfter, ok
}

// member reads a member name and its colon at b[i:]; its value follows.
func (s *memberScan) member(i int) (int, bool) {
	b := s.b
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	end, special, ok := scanString(b, i+1, true)
	if !ok {
		return i, false
	}
	s.addKey(i+1, end-1, special)
	i = skipWS(b, end)
	if i >= len(b) || b[i] != ':' {
		return i, false
	}
	return skipWS(b, i+1), true
}

func (s *memberScan) push(obj bool) bool {
	if len(s.frames) >= maxNesting {
		return false
	}
	s.frames = append(s.frames, scanFrame{obj: obj, first: len(s.keys), norm: len(s.norm)})
	return true
}

// pop closes the innermost container; an object's names leave keys and
// norm with it.
func (s *memberScan) pop() {
	f := s.frames[len(s.frames)-1]
	s.frames = s.frames[:len(s.frames)-1]
	s.keys, s.norm = s.keys[:f.first], s.norm[:f.norm]
}

// addKey records the name b[start:end] in the innermost object and looks
// for it among the object's earlier names.
func (s *memberScan) addKey(start, end int, special bool) {
	k := keySpan{start: int32(start), end: int32(end)}
	if special {
		n := len(s.norm)
		s.norm = appendUnquoted(s.norm, s.b[start:end])
		k = keySpan{start: int32(n), end: int32(len(s.norm)), norm: true}
	}
	f := &s.frames[len(s.frames)-1]
	if s.dupAt < 0 && s.repeats(f, k) {
		s.dupAt = start
		s.dupPath = s.path(string(s.name(k)))
	}
	s.keys = append(s.keys, k)
}

func (s *memberScan) name(k keySpan) []byte {
	if k.norm {
		return s.norm[k.start:k.end]
	}
	return s.b[k.start:k.end]
}

// repeats reports whether k names a member f already has. The top-level
// object compares without regard to case.
func (s *memberScan) repeats(f *scanFrame, k keySpan) bool {
	fold := len(s.frames) == 1
	name := s.name(k)
	earlier := s.keys[f.first:]
	if f.set == nil && len(earlier) < linearKeys {
		for _, e := range earlier {
			if s.same(e, k, name, fold) {
				return true
			}
		}
		return false
	}
	if f.set == nil {
		f.set = make(map[string]struct{}, 2*linearKeys)
		for _, e := range earlier {
			f.set[setKey(s.name(e), fold)] = struct{}{}
		}
	}
	key := setKey(name, fold)
	if _, ok := f.set[key]; ok {
		return true
	}
	f.set[key] = struct{}{}
	return false
}

func (s *memberScan) same(e, k keySpan, name []byte, fold bool) bool {
	if !e.norm && !k.norm && e.end-e.start != k.end-k.start {
		return false // ASCII names of different lengths are never equal
	}
	if fold {
		return bytes.EqualFold(s.name(e), name)
	}
	return bytes.Equal(s.name(e), name)
}

// setKey is a name as a large object's set holds it: folded the way
// bytes.EqualFold compares (upper then lower maps every rune of a fold
// orbit, the Kelvin sign and the long s included, to one rune).
func setKey(name []byte, fold bool) string {
	if !fold {
		return string(name)
	}
	return strings.ToLower(strings.ToUpper(string(name)))
}

// path names the member the scan is at, e.g. tools[0].function.name: the
// member of an object that holds the next container is its latest name.
func (s *memberScan) path(last string) string {
	var p []byte
	for i := 0; i+1 < len(s.frames); i++ {
		if s.frames[i].obj {
			if len(p) > 0 {
				p = append(p, '.')
			}
			p = append(p, s.name(s.keys[s.frames[i+1].first-1])...)
			continue
		}
		p = append(p, '[')
		p = strconv.AppendInt(p, int64(s.frames[i].index), 10)
		p = append(p, ']')
	}
	if len(p) > 0 {
		p = append(p, '.')
	}
	return string(append(p, last...))
}
