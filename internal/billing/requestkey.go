package billing

import (
	"encoding/hex"
	"strings"

	"github.com/google/uuid"
)

// requestKey is prefix, "-" and id in its canonical text form, built in
// one allocation: prefix + "-" + id.String() makes the UUID's string and
// then the key, two per call on the path every call reserves through.
func requestKey(prefix string, id uuid.UUID) string {
	var text [36]byte
	hex.Encode(text[0:8], id[0:4])
	text[8] = '-'
	hex.Encode(text[9:13], id[4:6])
	text[13] = '-'
	hex.Encode(text[14:18], id[6:8])
	text[18] = '-'
	hex.Encode(text[19:23], id[8:10])
	text[23] = '-'
	hex.Encode(text[24:], id[10:])
	var b strings.Builder
	b.Grow(len(prefix) + 1 + len(text))
	b.WriteString(prefix)
	b.WriteByte('-')
	b.Write(text[:])
	return b.String()
}
