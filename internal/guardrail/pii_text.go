package guardrail

import "strings"

// scanEmails finds addresses around each '@': a local part of the
// characters addresses use, and a domain of at least two labels whose last
// is letters only. Package pins (pkg@1.2.3), decorators and scp-style
// remotes (git@host:path) are not addresses.
func scanEmails(s string, dst []Match) []Match {
	from := 0
	for {
		k := strings.IndexByte(s[from:], '@')
		if k < 0 {
			return dst
		}
		a := from + k
		from = a + 1
		start := a
		for start > 0 && isLocalByte(s[start-1]) {
			start--
		}
		for start < a && s[start] == '.' {
			start++
		}
		if start == a {
			continue
		}
		end, ok := domainAt(s, a+1)
		if !ok || (end < len(s) && s[end] == ':') {
			continue
		}
		dst = append(dst, Match{Start: start, End: end, Kind: KindEmail})
		from = end
	}
}

func isLocalByte(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

// domainAt reads a domain name from i and returns its end.
func domainAt(s string, i int) (int, bool) {
	j, labels, lastStart := i, 0, i
	for {
		k := j
		for k < len(s) && (isAlnum(s[k]) || s[k] == '-') {
			k++
		}
		if k == j || s[j] == '-' || s[k-1] == '-' {
			break
		}
		labels++
		lastStart, j = j, k
		if j+1 < len(s) && s[j] == '.' && isAlnum(s[j+1]) {
			j++
			continue
		}
		break
	}
	if labels < 2 || j-lastStart < 2 || isWordByte(at(s, j)) {
		return 0, false
	}
	for k := lastStart; k < j; k++ {
		if !isAlpha(s[k]) {
			return 0, false
		}
	}
	return j, true
}

// intlPhoneAt reads "+" and digit groups separated by one space, dash,
// dot or a parenthesised group ("+44 (0)20 7946 0958").
func intlPhoneAt(s string, i int) (int, bool) {
	j := i + 1
	if !isDigit(at(s, j)) || s[j] == '0' {
		return 0, false
	}
	digits, end := 0, 0
	for j < len(s) {
		c := s[j]
		switch {
		case isDigit(c):
			digits++
			j++
			end = j
			continue
		case c == ' ' || c == '-' || c == '.':
			if isDigit(at(s, j+1)) || (at(s, j+1) == '(' && c == ' ') {
				j++
				continue
			}
		case c == '(':
			if k := strings.IndexByte(s[j:min(len(s), j+6)], ')'); k > 1 && allDigits(s[j+1:j+k]) {
				j += k + 1
				if at(s, j) == ' ' {
					j++
				}
				continue
			}
		}
		break
	}
	if digits < 8 || digits > 15 || !numberEnds(s, end) {
		return 0, false
	}
	return end, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// nanpAt reads a North American number with consistent separators; area
// code and exchange start with 2–9.
func nanpAt(s string, i int) (int, bool) {
	j := i
	if s[i] == '(' {
		if i+14 > len(s) || s[i+4] != ')' || !allDigits(s[i+1:i+4]) {
			return 0, false
		}
		if s[i+1] < '2' {
			return 0, false
		}
		j = i + 5
		if s[j] == ' ' {
			j++
		}
		return tailAt(s, j, '-')
	}
	if i+12 > len(s) || !allDigits(s[i:i+3]) || s[i] < '2' {
		return 0, false
	}
	sep := s[i+3]
	if sep != '-' && sep != '.' {
		return 0, false
	}
	return tailAt(s, i+4, sep)
}

// tailAt reads ddd<sep>dddd, the exchange and line of a NANP number.
func tailAt(s string, j int, sep byte) (int, bool) {
	if j+8 > len(s) || !allDigits(s[j:j+3]) || s[j] < '2' || s[j+3] != sep || !allDigits(s[j+4:j+8]) {
		return 0, false
	}
	end := j + 8
	if !numberEnds(s, end) || at(s, end) == sep {
		return 0, false
	}
	return end, true
}

// ibanAt reads n characters (spaces between groups of four skipped) and
// checks them.
func ibanAt(s string, i, n int) (int, bool) {
	var buf [34]byte
	k, j := 0, i
	for k < n && j < len(s) {
		c := s[j]
		if c == ' ' && k%4 == 0 && k > 0 && j+1 < len(s) && isAlnum(s[j+1]) {
			j++
			continue
		}
		if !isDigit(c) && !isUpper(c) {
			return 0, false
		}
		buf[k] = c
		k++
		j++
	}
	if k != n || isWordByte(at(s, j)) {
		return 0, false
	}
	return j, mod97(buf[:n]) == 1
}

// mod97 is the IBAN check: the first four characters moved to the end,
// letters as 10–35, the whole number modulo 97.
func mod97(iban []byte) int {
	r := 0
	add := func(c byte) {
		if isDigit(c) {
			r = (r*10 + int(c-'0')) % 97
			return
		}
		r = (r*100 + int(c-'A') + 10) % 97
	}
	for _, c := range iban[4:] {
		add(c)
	}
	for _, c := range iban[:4] {
		add(c)
	}
	return r
}

// ibanLengths is the IBAN length of each country that uses one (the
// SWIFT registry); a country code absent here is not an IBAN.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
	"BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29,
	"ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
	"HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
	"LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
	"MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29,
	"RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28,
	"TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}

// scanIPv6 finds IPv6 addresses: eight groups of hexadecimal, or fewer
// around one "::". A compressed address needs a digit and either three
// groups or a long one, so "std::vector", "a[1::2]" and the loopback "::1"
// are not taken for an address.
func scanIPv6(s string, dst []Match) []Match {
	from := 0
	for {
		k := strings.IndexByte(s[from:], ':')
		if k < 0 {
			return dst
		}
		c := from + k
		start := c
		for start > 0 && isHex(s[start-1]) && c-start < 4 {
			start--
		}
		from = c + 1
		b := before(s, start)
		if isWordByte(b) || b == ':' || b == '.' {
			continue
		}
		if end, ok := ipv6At(s, start); ok {
			dst = append(dst, Match{Start: start, End: end, Kind: KindIPv6})
			from = end
		}
	}
}

func ipv6At(s string, i int) (int, bool) {
	j, groups := i, 0
	double, long, digit := false, false, false
	if s[j] == ':' {
		if at(s, j+1) != ':' {
			return 0, false
		}
		double, j = true, j+2
	}
	for {
		k := j
		for k < len(s) && k-j < 5 && isHex(s[k]) {
			digit = digit || isDigit(s[k])
			k++
		}
		n := k - j
		if n == 0 {
			break
		}
		if n > 4 {
			return 0, false
		}
		long = long || n >= 3
		groups++
		j = k
		if at(s, j) != ':' {
			break
		}
		if at(s, j+1) == ':' {
			if double {
				return 0, false
			}
			double, j = true, j+2
			continue
		}
		if !isHex(at(s, j+1)) {
			break
		}
		j++
	}
	if isWordByte(at(s, j)) || !digit {
		return 0, false
	}
	if !double {
		return j, groups == 8
	}
	return j, groups >= 2 && groups <= 7 && (long || groups >= 3)
}
