package guardrail

// piiMask selects the kinds one pii guardrail scans for.
type piiMask uint8

const (
	maskEmail piiMask = 1 << iota
	maskPhone
	maskCard
	maskIBAN
	maskSSN
	maskIPv4
	maskIPv6
)

var maskOf = map[string]piiMask{
	KindEmail: maskEmail, KindPhone: maskPhone, KindCard: maskCard, KindIBAN: maskIBAN,
	KindSSN: maskSSN, KindIPv4: maskIPv4, KindIPv6: maskIPv6,
}

// Byte classes of the one pass over the text.
const (
	clNone = iota
	clDigit
	clPlus
	clParen
	clUpper
)

var byteClass = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = clDigit
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = clUpper
	}
	t['+'], t['('] = clPlus, clParen
	return t
}()

// piiScanner scans for the kinds in mask. Numbers, phone numbers and IBANs
// are found in one pass that looks only at bytes that may start one and
// do not continue a word; e-mail and IPv6 addresses are found from their
// '@' and ':' with the library's vectorised byte search.
func piiScanner(mask piiMask) func(string, []Match) []Match {
	return func(s string, dst []Match) []Match {
		if mask&(maskPhone|maskCard|maskIBAN|maskSSN|maskIPv4) != 0 {
			dst = scanPIIPass(s, mask, dst)
		}
		if mask&maskEmail != 0 {
			dst = scanEmails(s, dst)
		}
		if mask&maskIPv6 != 0 {
			dst = scanIPv6(s, dst)
		}
		return dst
	}
}

func scanPIIPass(s string, mask piiMask, dst []Match) []Match {
	for i := 0; i < len(s); i++ {
		cl := byteClass[s[i]]
		if cl == clNone {
			continue
		}
		b := before(s, i)
		if isWordByte(b) || b == '.' || b == '-' || (b == '+' && cl == clDigit) {
			continue
		}
		end, kind := piiAt(s, i, cl, mask)
		if end > 0 {
			dst = append(dst, Match{Start: i, End: end, Kind: kind})
			i = end - 1
		} else if cl == clDigit {
			i = skipRun(s, i) - 1
		}
	}
	return dst
}

// piiAt reports the datum starting at i, trying the strictest shapes
// first.
func piiAt(s string, i int, cl uint8, mask piiMask) (int, string) {
	switch cl {
	case clUpper:
		if mask&maskIBAN != 0 && i+15 <= len(s) && isUpper(at(s, i+1)) && isDigit(at(s, i+2)) && isDigit(at(s, i+3)) {
			if n := ibanLengths[s[i:i+2]]; n > 0 {
				if end, ok := ibanAt(s, i, n); ok {
					return end, KindIBAN
				}
			}
		}
	case clPlus:
		if mask&maskPhone != 0 {
			if end, ok := intlPhoneAt(s, i); ok {
				return end, KindPhone
			}
		}
	case clParen:
		if mask&maskPhone != 0 {
			if end, ok := nanpAt(s, i); ok {
				return end, KindPhone
			}
		}
	case clDigit:
		return numberAt(s, i, mask)
	}
	return 0, ""
}

func numberAt(s string, i int, mask piiMask) (int, string) {
	if mask&maskSSN != 0 && i+11 <= len(s) && ssnAt(s, i) {
		return i + 11, KindSSN
	}
	if mask&maskCard != 0 {
		if end, ok := cardAt(s, i); ok {
			return end, KindCard
		}
	}
	if mask&maskIPv4 != 0 {
		if end, ok := ipv4At(s, i); ok && !versionContext(s, i) {
			return end, KindIPv4
		}
	}
	if mask&maskPhone != 0 {
		if end, ok := nanpAt(s, i); ok {
			return end, KindPhone
		}
	}
	return 0, ""
}
