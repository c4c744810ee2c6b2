package guardrail

// The scanners here read numbers by hand rather than with regular
// expressions: each is one pass over the text that skips anything that is
// not a digit at once, and each applies the check a pattern cannot (Luhn,
// the card brands' prefixes and lengths, octet ranges, SSN area rules), so
// order numbers, timestamps, dates and versions are not taken for data.

// numberEnds reports whether a number may end at i: what follows does not
// continue it (another digit, a decimal part, a further group, a unit).
func numberEnds(s string, i int) bool {
	c := at(s, i)
	if isWordByte(c) {
		return false
	}
	if (c == '.' || c == '-' || c == '/' || c == ':') && isDigit(at(s, i+1)) {
		return false
	}
	return true
}

// skipRun moves past the digits and digit separators starting at i, so a
// scanner looks at each number once.
func skipRun(s string, i int) int {
	for i < len(s) && (isDigit(s[i]) || ((s[i] == ' ' || s[i] == '-' || s[i] == '.') && isDigit(at(s, i+1)) && isDigit(before(s, i)))) {
		i++
	}
	return i
}

// cardAt reads digit groups from i and returns the end of the longest
// prefix of whole groups that is a card number.
func cardAt(s string, i int) (int, bool) {
	var digits [19]byte
	n, best := 0, -1
	j := i
	for j < len(s) {
		if !isDigit(s[j]) {
			if (s[j] == ' ' || s[j] == '-') && isDigit(at(s, j+1)) && n > 0 {
				if n >= 13 && numberEnds(s, j) && isCard(digits[:n]) {
					best = j
				}
				j++
				continue
			}
			break
		}
		if n == len(digits) {
			return best, best > 0
		}
		digits[n] = s[j] - '0'
		n++
		j++
	}
	if n >= 13 && numberEnds(s, j) && isCard(digits[:n]) {
		best = j
	}
	return best, best > 0
}

// isCard checks the brand prefix for the length and the Luhn digit.
func isCard(d []byte) bool {
	return cardBrand(d) && luhn(d)
}

func cardBrand(d []byte) bool {
	n := len(d)
	p2 := int(d[0])*10 + int(d[1])
	p4 := p2*100 + int(d[2])*10 + int(d[3])
	switch {
	case d[0] == 4: // Visa
		return n == 13 || n == 16 || n == 19
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720: // Mastercard
		return n == 16
	case p2 == 34 || p2 == 37: // American Express
		return n == 15
	case p4 == 6011, p2 == 65, p4/10 >= 644 && p4/10 <= 649: // Discover
		return n >= 16 && n <= 19
	case p4 >= 3528 && p4 <= 3589: // JCB
		return n >= 16 && n <= 19
	case p4/10 >= 300 && p4/10 <= 305, p2 == 36, p2 == 38, p2 == 39: // Diners Club
		return n >= 14 && n <= 19
	case p2 == 62: // UnionPay
		return n >= 16 && n <= 19
	case p2 == 50, p2 >= 56 && p2 <= 58, p2 == 67: // Maestro
		return n >= 13 && n <= 19
	}
	return false
}

func luhn(d []byte) bool {
	sum := 0
	double := false
	for k := len(d) - 1; k >= 0; k-- {
		v := int(d[k])
		if double {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return sum%10 == 0
}

func ssnAt(s string, i int) bool {
	for k := 0; k < 11; k++ {
		c := s[i+k]
		if k == 3 || k == 6 {
			if c != '-' {
				return false
			}
		} else if !isDigit(c) {
			return false
		}
	}
	if !numberEnds(s, i+11) || at(s, i+11) == '-' {
		return false
	}
	area := s[i : i+3]
	return area != "000" && area != "666" && area[0] != '9' && s[i+4:i+6] != "00" && s[i+7:i+11] != "0000"
}

func ipv4At(s string, i int) (int, bool) {
	j := i
	for part := 0; part < 4; part++ {
		if part > 0 {
			if at(s, j) != '.' {
				return 0, false
			}
			j++
		}
		k, v := j, 0
		for k < len(s) && isDigit(s[k]) && k-j < 4 {
			v = v*10 + int(s[k]-'0')
			k++
		}
		if k == j || k-j > 3 || v > 255 || (k-j > 1 && s[j] == '0') {
			return 0, false
		}
		j = k
	}
	c := at(s, j)
	if isWordByte(c) || c == '-' || (c == '.' && isDigit(at(s, j+1))) {
		return 0, false
	}
	return j, true
}
