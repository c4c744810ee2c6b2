package protocol

import (
	"encoding/binary"
	"unicode/utf8"
)

// The JSON grammar's tokens for CheckMembers: white space, literals,
// numbers and strings exactly as encoding/json accepts them, and member
// names decoded as it decodes them.

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
