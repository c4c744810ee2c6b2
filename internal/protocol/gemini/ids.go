package gemini

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// synthID makes a stable call id for a functionCall that came without one,
// from where it sits (turn and part index, or answer id and part index) and
// its name, so the same history always converts to the same ids.
func synthID(keys ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(keys, "\x00")))
	return "call_" + hex.EncodeToString(sum[:8])
}

func itoa(i int) string { return strconv.Itoa(i) }
