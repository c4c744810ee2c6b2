package protocol

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

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

// strStop marks the bytes that end the fast part of a string's scan:
// the quote, the escape, control characters (invalid) and, for names,
// bytes outside ASCII (decoded before they are compared).
var strStop = func() (t [256]uint8) {
	for c := 0; c < 0x20; c++ {
		t[c] = 1
	}
	t['"'], t['\\'] = 1, 1
	for c := 0x80; c < 0x100; c++ {
		t[c] = 2
	}
	return t
}()

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

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func literal(b []byte, i int, word string) (int, bool) {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return i, false
	}
	return i + len(word), true
}

// scanNumber scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func scanNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return i, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return i, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// scanString scans a string whose opening quote is before b[i] and returns
// the offset after its closing quote. special reports escapes or, for a
// name, bytes outside ASCII: such a name is decoded before it is compared.
func scanString(b []byte, i int, name bool) (end int, special, ok bool) {
	for {
		if !name {
			i = plainRun(b, i)
		}
		for i < len(b) && strStop[b[i]] == 0 {
			i++
		}
		if i >= len(b) {
			return i, special, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, special, true
		case c == '\\':
			n, ok := escapeLen(b, i)
			if !ok {
				return i, special, false
			}
			special = true
			i += n
		case c >= 0x80:
			special = special || name
			i++
		default: // a control character
			return i, special, false
		}
	}
}

// plainRun skips eight bytes at a time while none of them ends the fast
// part of a value string (a quote, a backslash, a control character):
// message text is most of a request body's bytes.
func plainRun(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		below := (x - ones*0x20) &^ x
		quote, bslash := x^(ones*'"'), x^(ones*'\\')
		if (below|(quote-ones)&^quote|(bslash-ones)&^bslash)&highs != 0 {
			return i
		}
		i += 8
	}
	return i
}

// escapeLen is the length of the escape at b[i] (a backslash), ok false
// when it is not one JSON allows.
func escapeLen(b []byte, i int) (int, bool) {
	if i+1 >= len(b) {
		return 0, false
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, true
	case 'u':
		if i+6 > len(b) {
			return 0, false
		}
		for _, h := range b[i+2 : i+6] {
			if hexVal(h) < 0 {
				return 0, false
			}
		}
		return 6, true
	}
	return 0, false
}

func hexVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c - 'a' + 10)
	case c >= 'A' && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// appendUnquoted appends the decoded name of a valid string body s as
// encoding/json decodes it: escapes resolved, a surrogate pair joined, a
// lone surrogate and every byte that is not UTF-8 made U+FFFD.
func appendUnquoted(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			if s[i+1] != 'u' {
				dst = append(dst, unescapeByte(s[i+1]))
				i += 2
				continue
			}
			r := hex4(s[i+2:])
			i += 6
			if utf16IsSurrogate(r) {
				if r < 0xDC00 && i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					if r2 := hex4(s[i+2:]); r2 >= 0xDC00 && r2 <= 0xDFFF {
						dst = utf8.AppendRune(dst, (r-0xD800)<<10|(r2-0xDC00)+0x10000)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			dst = utf8.AppendRune(dst, r) // RuneError for a byte that is not UTF-8
			i += size
		}
	}
	return dst
}

func unescapeByte(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c // '"', '\\', '/'
}

func hex4(b []byte) rune {
	return hexVal(b[0])<<12 | hexVal(b[1])<<8 | hexVal(b[2])<<4 | hexVal(b[3])
}

func utf16IsSurrogate(r rune) bool { return r >= 0xD800 && r <= 0xDFFF }
