package anthropic

import "crypto/rand"

const idAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// newID returns prefix plus 24 random base62 characters, the length and
// alphabet the format's own message and tool-use ids use.
func newID(prefix string) string {
	var raw [24]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails on supported platforms
	out := make([]byte, len(prefix), len(prefix)+len(raw))
	copy(out, prefix)
	for _, b := range raw {
		out = append(out, idAlphabet[int(b)%len(idAlphabet)])
	}
	return string(out)
}

// sanitizeToolID makes an id from another format acceptable upstream, whose
// tool ids must match ^[a-zA-Z0-9_-]+$. The mapping is deterministic so a
// call and its result still match after conversion.
func sanitizeToolID(id string) string {
	clean := true
	for i := 0; i < len(id); i++ {
		if !isIDByte(id[i]) {
			clean = false
			break
		}
	}
	if clean {
		return id
	}
	out := []byte(id)
	for i := range out {
		if !isIDByte(out[i]) {
			out[i] = '_'
		}
	}
	return string(out)
}

func isIDByte(c byte) bool {
	return c == '_' || c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
