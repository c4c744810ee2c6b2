package guardrail

import "strings"

// keyShape is one kind of credential recognised by its fixed prefix and
// the characters and length of its body.
type keyShape struct {
	prefix string
	kind   string
	// body reports a byte that may follow the prefix.
	body func(byte) bool
	// min and max bound the body's length (max 0: unbounded).
	min, max int
	// exact requires the body to end at max.
	exact bool
}

func isTokenByte(c byte) bool  { return isAlnum(c) || c == '_' || c == '-' }
func isUpperDigit(c byte) bool { return isUpper(c) || isDigit(c) }

// keyShapes are the credential formats of the providers gateways see most
// (CONTRACT §20's list and their common kin).
var keyShapes = []keyShape{
	{prefix: "sk-", kind: KindOpenAIKey, body: isTokenByte, min: 20},
	{prefix: "AKIA", kind: KindAWSKey, body: isUpperDigit, min: 16, max: 16, exact: true},
	{prefix: "ASIA", kind: KindAWSKey, body: isUpperDigit, min: 16, max: 16, exact: true},
	{prefix: "ghp_", kind: KindGitHub, body: isAlnum, min: 36},
	{prefix: "gho_", kind: KindGitHub, body: isAlnum, min: 36},
	{prefix: "ghu_", kind: KindGitHub, body: isAlnum, min: 36},
	{prefix: "ghs_", kind: KindGitHub, body: isAlnum, min: 36},
	{prefix: "ghr_", kind: KindGitHub, body: isAlnum, min: 36},
	{prefix: "github_pat_", kind: KindGitHub, body: isTokenByte, min: 40},
	{prefix: "glpat-", kind: KindGitLab, body: isTokenByte, min: 20},
	{prefix: "xoxb-", kind: KindSlack, body: isTokenByte, min: 10},
	{prefix: "xoxp-", kind: KindSlack, body: isTokenByte, min: 10},
	{prefix: "xoxa-", kind: KindSlack, body: isTokenByte, min: 10},
	{prefix: "xoxs-", kind: KindSlack, body: isTokenByte, min: 10},
	{prefix: "AIza", kind: KindGoogleKey, body: isTokenByte, min: 35, max: 35, exact: true},
	{prefix: "sk_live_", kind: KindStripe, body: isAlnum, min: 20},
	{prefix: "rk_live_", kind: KindStripe, body: isAlnum, min: 20},
	{prefix: "sk_test_", kind: KindStripe, body: isAlnum, min: 20},
}

// secretFirst marks the bytes a secret may start with, so the scan skips
// every other byte with one table lookup.
var secretFirst = func() (t [256]bool) {
	for _, k := range keyShapes {
		t[k.prefix[0]] = true
	}
	t['e'], t['-'] = true, true
	return t
}()

// shapesBy lists the key shapes by the first two bytes of their prefix.
var shapesBy = func() map[[2]byte][]*keyShape {
	m := map[[2]byte][]*keyShape{}
	for i := range keyShapes {
		k := &keyShapes[i]
		key := [2]byte{k.prefix[0], k.prefix[1]}
		m[key] = append(m[key], k)
	}
	return m
}()

// scanSecrets finds key-shaped secrets, JSON web tokens and PEM private
// key blocks in one pass over the text.
func scanSecrets(s string, dst []Match) []Match {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !secretFirst[c] || isTokenByte(before(s, i)) {
			continue
		}
		end, kind := secretAt(s, i)
		if end > 0 {
			dst = append(dst, Match{Start: i, End: end, Kind: kind})
			i = end - 1
		}
	}
	return dst
}

// secretAt reports the secret starting at i, if any.
func secretAt(s string, i int) (int, string) {
	rest := s[i:]
	switch {
	case rest[0] == 'e' && strings.HasPrefix(rest, "eyJ"):
		if end, ok := jwtAt(s, i); ok {
			return end, KindJWT
		}
		return 0, ""
	case rest[0] == '-':
		if end, ok := privateKeyAt(s, i); ok {
			return end, KindPrivateKey
		}
		return 0, ""
	}
	if len(rest) < 2 {
		return 0, ""
	}
	for _, sh := range shapesBy[[2]byte{rest[0], rest[1]}] {
		if strings.HasPrefix(rest, sh.prefix) {
			if end, ok := shapeAt(s, i, sh); ok {
				return end, sh.kind
			}
		}
	}
	return 0, ""
}

// shapeAt checks the body after a key shape's prefix at start.
func shapeAt(s string, start int, k *keyShape) (int, bool) {
	j := start + len(k.prefix)
	end := j
	for end < len(s) && k.body(s[end]) && (k.max == 0 || end-j <= k.max) {
		end++
	}
	body := end - j
	if body < k.min || (k.max > 0 && body > k.max) || (k.exact && body != k.max) || isTokenByte(at(s, end)) {
		return 0, false
	}
	return end, true
}

// jwtAt reads a JSON web token: three base64url segments, the first two
// starting with the encoding of '{"'.
func jwtAt(s string, i int) (int, bool) {
	j := i
	for seg := 0; seg < 3; seg++ {
		if seg > 0 {
			if at(s, j) != '.' {
				return 0, false
			}
			j++
			if seg == 1 && !strings.HasPrefix(s[j:], "eyJ") {
				return 0, false
			}
		}
		k := j
		for k < len(s) && isTokenByte(s[k]) {
			k++
		}
		if k-j < 10 {
			return 0, false
		}
		j = k
	}
	return j, true
}

// privateKeyAt reads a PEM private key block from its BEGIN line to the
// matching END line, or to the end of the text when it is cut off (a key
// half pasted is still a key).
func privateKeyAt(s string, start int) (int, bool) {
	const begin, end = "-----BEGIN ", "-----END "
	if !strings.HasPrefix(s[start:], begin) {
		return 0, false
	}
	head := start + len(begin)
	line := s[head:min(len(s), head+64)]
	k := strings.Index(line, "PRIVATE KEY-----")
	if k < 0 || strings.ContainsAny(line[:k], "\r\n") {
		return 0, false
	}
	stop := len(s)
	if e := strings.Index(s[head:], end); e >= 0 {
		stop = head + e + len(end)
		if t := strings.Index(s[stop:], "-----"); t >= 0 {
			stop += t + 5
		}
	}
	return stop, true
}
