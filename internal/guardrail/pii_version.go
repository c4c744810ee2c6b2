package guardrail

import "strings"

// A four-part dotted number is an IPv4 address or a version (.NET
// assemblies, Windows builds, firmware all number 1.2.3.4). The shape
// cannot tell them apart; what comes before it can. versionContext reads
// the sigil right before the number and up to three words back on the same
// line, nearest first: a word that names an address settles it as one, a
// word that names a version settles it as a version. A bare number with
// neither stays an address, so a real one is never let through unnoticed.
func versionContext(s string, i int) bool {
	switch {
	case strings.HasSuffix(s[:i], "=="), strings.HasSuffix(s[:i], "~="),
		strings.HasSuffix(s[:i], ">="), strings.HasSuffix(s[:i], "<="),
		before(s, i) == '^', before(s, i) == '~':
		return true
	}
	j := i
	for n := 0; n < 3; n++ {
		w, start := wordBefore(s, j)
		if w == "" {
			return false
		}
		switch classifyWord(w) {
		case wordAddress:
			return false
		case wordVersion:
			return true
		}
		j = start
	}
	return false
}

const (
	wordOther = iota
	wordAddress
	wordVersion
)

// classifyWord says whether a word (lower-cased ASCII) names an address or
// a version. Identifiers count by what they contain, so AssemblyVersion,
// __version__ and firmware_rev read as versions and server_ip as an
// address.
func classifyWord(w string) int {
	for _, a := range addressWords {
		if w == a || strings.HasSuffix(w, "_"+a) || strings.HasPrefix(w, a+"_") {
			return wordAddress
		}
	}
	if strings.Contains(w, "version") {
		return wordVersion
	}
	for _, v := range versionWords {
		if w == v || strings.HasSuffix(w, "_"+v) {
			return wordVersion
		}
	}
	return wordOther
}

var (
	addressWords = []string{"ip", "ipv4", "ip4", "addr", "address", "host", "hostname", "server", "gateway", "dns", "nameserver", "subnet", "netmask", "peer", "proxy", "inet"}
	versionWords = []string{"v", "ver", "vers", "release", "released", "rel", "build", "rev", "revision", "firmware", "fw", "patch", "tag", "sdk", "upgrade", "upgraded", "update", "updated", "bump", "bumped", "pin", "pinned", "semver", "changelog"}
)

// wordBefore is the word that ends before i, skipping the spaces, quotes
// and punctuation in between but never a line break or a digit (a number
// in between is data of its own), lower-cased; start is where it begins.
func wordBefore(s string, i int) (string, int) {
	j := i
	for j > 0 && i-j < 24 {
		c := s[j-1]
		if c == '\n' || c == '\r' || isDigit(c) || isAlnum(c) || c == '_' {
			break
		}
		j--
	}
	end := j
	for j > 0 && end-j < 40 && (isAlnum(s[j-1]) || s[j-1] == '_') {
		j--
	}
	if j == end || isDigit(s[j]) {
		return "", j
	}
	return strings.ToLower(s[j:end]), j
}
